import Foundation

/// What `fetch` allows each host, in one place:
/// - `--per-host N`: at most N images of one host load at once, whatever the overall concurrency
///   (``acquire(_:)`` / ``release(_:)``, around each image, cache hits included);
/// - `--rate-per-host R`: requests sent to one host start at least 1/R s apart (a token bucket
///   of one token; ``pace(_:)``, before every request that goes to the network, retries too);
/// - back-off: a `429` or `503` with `Retry-After` pauses every request to that host until then
///   (``backOff(_:for:)``), not only the retried URL; one that asks for longer than
///   `--max-retry-after` is not asked again in this run (``refuse(_:)``: its requests are refused
///   before they are sent, and its waiting loads are let through at once to fail).
///
/// Waiting for a host's turn holds none of the run's slots: ``tryAcquire(_:)`` admits a load
/// only when its host is due and no load admitted before has yet to send its request, so
/// `fetch` parks the host's other loads (``ParkedLoads``) and starts other hosts' meanwhile,
/// waking when the host is due (``earliestStart(of:)``). Cache hits send nothing and wait for
/// nothing: a load that ends without a request (``release(_:)``) lets the next one in at once.
///
/// ```swift
/// let limiter = HostLimiter(limit: 2, interval: .milliseconds(200))
/// await limiter.acquire("example.org"); defer { Task { await limiter.release("example.org") } }
/// if try await limiter.pace("example.org") { /* send the request */ }
/// ```
actor HostLimiter {
    private let limit: Int?
    private let interval: Duration?
    private var running: [String: Int] = [:]
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]
    /// Per host: the earliest start of the next request (rate and back-off together).
    private var nextStart: [String: ContinuousClock.Instant] = [:]
    /// Per host (with `--rate-per-host`): a load ``tryAcquire(_:)`` admitted has not sent its
    /// request yet; until then (or this time, one interval after the admission, should it
    /// never send one) the host's next loads stay parked instead of waiting in a slot.
    private var admitted: [String: ContinuousClock.Instant] = [:]
    /// Per host: until when its last `Retry-After` asked for no request.
    private var backedOffUntil: [String: ContinuousClock.Instant] = [:]
    /// Hosts that asked for a longer wait than `--max-retry-after`: no request for the rest of the run.
    private var refused: [String: HostRefusal] = [:]

    init(limit: Int?, interval: Duration? = nil) {
        self.limit = limit
        self.interval = interval
    }

    func acquire(_ host: String) async {
        guard let limit else { return }
        if running[host, default: 0] < limit {
            running[host, default: 0] += 1
            return
        }
        await withCheckedContinuation { waiting[host, default: []].append($0) }
    }

    /// Admits a load of `host` if the host is due (not backed off, its rate interval since the
    /// last request passed, no admitted load still to send) and has a free slot (always, without
    /// `--per-host`), taking the slot. Never waits.
    func tryAcquire(_ host: String) -> Bool {
        let now = ContinuousClock.now
        // A refused host's loads go at once: they fail without a request.
        if refused[host] == nil {
            if let next = nextStart[host], next > now { return false }
            if let pending = admitted[host], pending > now { return false }
        }
        if let limit {
            guard running[host, default: 0] < limit else { return false }
            running[host, default: 0] += 1
        }
        if let interval { admitted[host] = now + interval }
        return true
    }

    /// When the first of `hosts` may be admitted: now if one already may, nil if each waits for
    /// a slot (a load's end frees it, and wakes the parked loads then).
    ///
    /// A host that became due between a failed ``tryAcquire(_:)`` and this call is due *now*,
    /// not forgotten: leaving such hosts out (as this did) could leave a parked load with no
    /// wake-up and no load running, and `fetch` ended without it — a line lost, seen once in
    /// CI under load (`--rate-per-host 4/s`: the wake-up was timed from the admission, the
    /// host's next start from the request sent a few milliseconds later).
    func earliestStart(of hosts: some Sequence<String>) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        return hosts.compactMap { host -> ContinuousClock.Instant? in
            if let limit, running[host, default: 0] >= limit { return nil }
            if refused[host] != nil { return now }
            return max(now, [nextStart[host], admitted[host]].compactMap { $0 }.max() ?? now)
        }.min()
    }

    /// A load of `host` ended: hands its slot to the next waiter of `host`, if any; and if it
    /// sent no request (a cache hit, a refusal), the host's next load need not wait for it.
    func release(_ host: String) {
        admitted[host] = nil
        guard limit != nil else { return }
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            running[host, default: 1] -= 1
            if running[host] == 0 { running[host] = nil }
        }
    }

    /// Waits until a request to `host` may start: after the host's back-off, and `interval`
    /// after the previous one. The start is reserved before the wait, so waiters keep their order.
    /// `false` (at once, or after the wait) when the host is refused: the request is not sent.
    func pace(_ host: String) async throws -> Bool {
        guard refused[host] == nil else { return false }
        let now = ContinuousClock.now
        admitted[host] = nil  // the admitted load's request (or another's) goes now or next
        let start = max(now, nextStart[host] ?? now)
        if let interval {
            nextStart[host] = start + interval
        } else if start == now {
            nextStart[host] = nil
        }
        forgetPast(now)
        if start > now { try await Task.sleep(until: start, clock: .continuous) }
        return refused[host] == nil
    }

    /// `host` asked for a longer wait than `--max-retry-after`: it gets no request in this run.
    func refuse(_ refusal: HostRefusal) {
        if refused[refusal.host] == nil { refused[refusal.host] = refusal }
    }

    /// Why `host` gets no request in this run, if it is refused.
    func refusal(of host: String) -> HostRefusal? { refused[host] }

    /// `host` asked (`Retry-After`) for no request before `delay` from now.
    func backOff(_ host: String, for delay: Duration) {
        let until = ContinuousClock.now + delay
        nextStart[host] = max(until, nextStart[host] ?? until)
        backedOffUntil[host] = max(until, backedOffUntil[host] ?? until)
    }

    /// Whether `host` has asked for a pause (`Retry-After`) in this run, ended or not: a `0` or
    /// a date already past asks for one that ends at once, and its line is still tried again.
    func hasBackedOff(_ host: String) -> Bool { backedOffUntil[host] != nil }

    /// Keeps the table small over millions of hosts: starts already past mean nothing.
    private func forgetPast(_ now: ContinuousClock.Instant) {
        guard nextStart.count + admitted.count + backedOffUntil.count > 10_000 else { return }
        nextStart = nextStart.filter { $0.value > now }
        admitted = admitted.filter { $0.value > now }
        backedOffUntil = backedOffUntil.filter { $0.value > now }
    }
}
