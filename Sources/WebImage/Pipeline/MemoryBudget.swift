import DequeModule
import Foundation
import Metrics

/// One budget for the memory images take in a process: decoded pixels in memory caches,
/// decodes and renders in flight, animation frames held, and the encoded bytes of images being
/// downloaded or waiting to be decoded.
///
/// SDWebImage, Nuke and Kingfisher cap their caches only, so many large or animated images
/// decoding at once still run a process out of memory. Here work reserves what it will allocate
/// before it allocates it (``reserve(_:waitingAtMost:for:holding:)``): when the budget has no room, the
/// memory caches registered with it give memory back first (``addReclaimable(owner:cost:reclaim:)``),
/// then the work waits, first come first served, for reservations to end — at most the time
/// given, then it is refused with ``MemoryBudgetError/overBudget(requested:limit:)``; a
/// reservation larger than the whole budget is refused at once. A reservation ends when it is
/// released or deallocated.
///
/// Encoded bytes (``Use/encoded``: a response body from its `Content-Length` before it is read,
/// bytes read from the disk cache) may hold at most ``encodedLimit`` together; one body alone may
/// exceed it. Bodies wait for one another at that bound, so at least three quarters of the
/// budget stay for decoding them: a decode never waits for room held by bodies whose own decodes
/// wait behind it.
///
/// `webimage serve --memory-budget-mb`, `fetch` and `show` set one per process; a pipeline uses
/// the one in its configuration. The default, ``defaultLimit``, is derived from the cgroup
/// memory limit or, outside a container, from physical memory.
///
/// ```swift
/// let budget = MemoryBudget(limit: 256 << 20)
/// let reservation = try await budget.reserve(width * height * 4, waitingAtMost: .seconds(10))
/// defer { reservation.release() }
/// let image = try ImageCoderRegistry.default.decode(data)
/// ```
public final class MemoryBudget: Sendable {
    /// Bytes the budget allows.
    public let limit: Int
    /// The most that encoded bytes may hold at once, unless one body alone is larger: a quarter
    /// of ``limit``.
    public var encodedLimit: Int { max(1, limit / 4) }
    private let state = Locked(State())
    private let waits = Counter(label: "webimage_memory_budget_waits_total")
    private let refusals = Counter(label: "webimage_memory_budget_refusals_total")
    private let limitGauge = Gauge(label: "webimage_memory_budget_limit_bytes")
    private let inUseGauge = Gauge(label: "webimage_memory_budget_in_use_bytes")
    private let encodedGauge = Gauge(label: "webimage_memory_budget_encoded_bytes")

    /// What a reservation holds.
    public enum Use: Sendable {
        /// Decoded pixels: images, frames, processing buffers.
        case pixels
        /// Encoded bytes: a body being downloaded, or bytes read from a cache, until decoded.
        case encoded
    }

    private struct Reclaimable {
        var owner: ObjectIdentifier?
        /// Registrations of the same owner share one entry; it ends with the last of them.
        var registrations = 1
        var cost: @Sendable () -> Int
        var reclaim: @Sendable (_ toCost: Int) -> Void
    }

    private struct Waiter {
        var id: UInt64
        var bytes: Int
        var use: Use
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var reserved = 0 {
            didSet { peakReserved = max(peakReserved, reserved) }
        }
        var peakReserved = 0
        /// Encoded bytes reserved, or counted against ``encodedLimit`` while they wait for room.
        var encodedHeld = 0
        /// Waiters for room, first come first served.
        var waiting = Deque<Waiter>()
        /// Encoded reservations waiting for other encoded bytes to end (``encodedLimit``); they
        /// join `waiting` when they pass the bound, and hold no one up before.
        var encodedWaiting = Deque<Waiter>()
        var reclaimables: [UInt64: Reclaimable] = [:]
        var nextID: UInt64 = 0

        /// Whether encoded `bytes` may pass the encoded bound now (in order: none parked before them).
        func encodedMayPass(_ bytes: Int, limit: Int) -> Bool { encodedWaiting.isEmpty && encodedFits(bytes, limit: limit) }
        /// Within the bound, or alone.
        func encodedFits(_ bytes: Int, limit: Int) -> Bool { encodedHeld == 0 || encodedHeld + bytes <= limit }
    }

    /// A budget of `limit` bytes (at least one).
    public convenience init(limit: Int) {
        self.init(limit: limit, publishing: true)
    }

    /// `publishing`: whether the limit gauge is recorded now. The gauges are process-wide;
    /// ``shared`` is made whenever a configuration is (its default), also in a process that
    /// uses a budget of its own (`serve --memory-budget-mb`), so it records them only once it
    /// is used: it once showed half of physical memory as a server's limit.
    private init(limit: Int, publishing: Bool) {
        self.limit = max(1, limit)
        if publishing { limitGauge.record(self.limit) }
    }

    /// Half the cgroup memory limit when the process runs under one, else half of physical
    /// memory; at least 64 MB. Host memory is the fallback only: a container sees the host's.
    public static let defaultLimit: Int = defaultLimit(
        cgroupLimit: MemoryCache.cgroupMemoryLimit(), physicalMemory: Int(clamping: ProcessInfo.processInfo.physicalMemory))

    /// The default for a cgroup limit of `cgroupLimit` bytes (nil: none) and `physicalMemory`.
    public static func defaultLimit(cgroupLimit: Int?, physicalMemory: Int) -> Int {
        max((cgroupLimit ?? physicalMemory) / 2, 64 << 20)
    }

    /// The process-wide budget of ``defaultLimit`` bytes that pipelines use unless told otherwise.
    public static let shared = MemoryBudget(limit: defaultLimit, publishing: false)

    /// Bytes reserved now plus what the registered caches hold.
    public var inUse: Int { state.withLock { Self.used($0) } }
    /// Encoded bytes reserved now (or counted while they wait for room).
    public var encodedInUse: Int { state.withLock { $0.encodedHeld } }
    /// The most bytes reserved at once so far (caches not counted).
    public var peakReserved: Int { state.withLock { $0.peakReserved } }
    /// Reservations waiting for room now.
    public var waitingCount: Int { state.withLock { $0.waiting.count + $0.encodedWaiting.count } }

    /// Counts `cost` (what a cache holds now) as in use, and lets the budget call `reclaim` with
    /// a smaller cost to make room. Returns a token; the registration ends when it is released.
    ///
    /// `owner`: the object whose memory `cost` measures (the cache), which must outlive the
    /// registration. Registering the same owner again — two pipelines sharing one cache — counts
    /// it once; the first registration's closures answer, until the last registration ends.
    ///
    /// ```swift
    /// let token = budget.addReclaimable(owner: ObjectIdentifier(cache), cost: { cache.totalCost }, reclaim: { cache.trim(toCost: $0) })
    /// ```
    public func addReclaimable(
        owner: ObjectIdentifier? = nil, cost: @escaping @Sendable () -> Int, reclaim: @escaping @Sendable (_ toCost: Int) -> Void
    ) -> Registration {
        let id = state.withLock { state in
            if let owner, let shared = state.reclaimables.first(where: { $0.value.owner == owner })?.key {
                state.reclaimables[shared]?.registrations += 1
                return shared
            }
            state.nextID += 1
            state.reclaimables[state.nextID] = Reclaimable(owner: owner, cost: cost, reclaim: reclaim)
            return state.nextID
        }
        return Registration { [weak self] in
            guard let self else { return }
            let admitted = self.state.withLock { state in
                state.reclaimables[id]?.registrations -= 1
                guard state.reclaimables[id]?.registrations ?? 0 <= 0 else { return [CheckedContinuation<Bool, Never>]() }
                state.reclaimables[id] = nil
                return self.admitWaiters(&state)
            }
            for waiter in admitted { waiter.resume(returning: true) }
        }
    }

    /// Reserves `bytes` for `use`, waiting at most `timeout` for room.
    ///
    /// `holding` is what the caller already holds in this budget and keeps while it holds this
    /// reservation (the body of the image it decodes): a reservation that could never fit beside
    /// it is refused at once rather than after the wait.
    ///
    /// - Throws: ``MemoryBudgetError/overBudget(requested:limit:)`` when `bytes` and `holding`
    ///   together are more than the whole budget, or no room came within `timeout`;
    ///   ``MemoryBudgetError/cancelled`` when the task was cancelled while waiting.
    public func reserve(
        _ bytes: Int, waitingAtMost timeout: Duration, for use: Use = .pixels, holding: Int = 0
    ) async throws(MemoryBudgetError) -> Reservation {
        let bytes = max(0, bytes), holding = min(max(0, holding), limit)
        guard bytes <= limit - holding else {
            refusals.increment()
            let (total, overflow) = bytes.addingReportingOverflow(holding)
            throw .overBudget(requested: overflow ? .max : total, limit: limit)
        }
        let granted: Bool = state.withLock { state in
            guard state.waiting.isEmpty, use == .pixels || state.encodedMayPass(bytes, limit: encodedLimit), makeRoom(bytes, &state) else { return false }
            take(bytes, use, &state)
            return true
        }
        if granted { return reservation(bytes, use) }
        waits.increment()
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let admitted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate: Bool? = state.withLock { state in
                    if Task.isCancelled { return false }
                    let waiter = Waiter(id: id, bytes: bytes, use: use, continuation: continuation)
                    if use == .encoded {
                        guard state.encodedMayPass(bytes, limit: encodedLimit) else {
                            state.encodedWaiting.append(waiter)
                            return nil
                        }
                        state.encodedHeld += bytes  // past the bound: counted while it waits for room
                    }
                    if state.waiting.isEmpty, makeRoom(bytes, &state) {
                        state.reserved += bytes
                        return true
                    }
                    state.waiting.append(waiter)
                    return nil
                }
                if let immediate { return continuation.resume(returning: immediate) }
                Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    self?.giveUp(id)
                }
            }
        } onCancel: {
            giveUp(id)
        }
        guard admitted else {
            refusals.increment()
            if Task.isCancelled { throw .cancelled }
            throw .overBudget(requested: bytes, limit: limit)
        }
        return reservation(bytes, use)
    }

    /// Reserves `bytes` more for work that already holds `holding` (a body growing past its first
    /// step), from the room there is now, without waiting: ahead of the line and past the encoded
    /// bound. A growing body must not wait, since the room it would wait for may be held by loads
    /// queued behind it (their bodies, done, waiting to decode).
    ///
    /// - Throws: ``MemoryBudgetError/overBudget(requested:limit:)`` when there is no room now.
    func reserveNow(_ bytes: Int, for use: Use, holding: Int) throws(MemoryBudgetError) -> Reservation {
        let bytes = max(0, bytes), holding = min(max(0, holding), limit)
        let (total, overflow) = bytes.addingReportingOverflow(holding)
        let granted = bytes <= limit - holding && state.withLock { state in
            guard makeRoom(bytes, &state) else { return false }
            take(bytes, use, &state)
            return true
        }
        guard granted else {
            refusals.increment()
            throw .overBudget(requested: overflow ? .max : total, limit: limit)
        }
        return reservation(bytes, use)
    }

    /// Counts `bytes` of memory that already exists (a cached result being sent to a client) at
    /// once, past the limit if need be: new reservations wait for them to end, and nothing waits
    /// to count them. For memory that has no allocation to refuse, only an end to wait for.
    ///
    /// ```swift
    /// let held = budget.count(result.count)  // while a response sends a cached result
    /// defer { held.release() }
    /// ```
    public func count(_ bytes: Int) -> Reservation {
        let bytes = max(0, bytes)
        state.withLock { take(bytes, .pixels, &$0) }
        return reservation(bytes, .pixels)
    }

    // MARK: - Internals

    private func reservation(_ bytes: Int, _ use: Use) -> Reservation {
        recordGauges()
        return Reservation(bytes: bytes, use: use, budget: self)
    }

    private func recordGauges() {
        let (used, encoded) = state.withLock { (Self.used($0), $0.encodedHeld) }
        inUseGauge.record(used)
        encodedGauge.record(encoded)
        limitGauge.record(limit)  // the budget in use is the one the gauges describe
    }

    private func take(_ bytes: Int, _ use: Use, _ state: inout State) {
        state.reserved += bytes
        if use == .encoded { state.encodedHeld += bytes }
    }

    func end(_ bytes: Int, _ use: Use) {
        let admitted = state.withLock { state in
            state.reserved -= bytes
            if use == .encoded { state.encodedHeld -= bytes }
            return admitWaiters(&state)
        }
        for waiter in admitted { waiter.resume(returning: true) }
        recordGauges()
    }

    /// The waiter `id` stops waiting (its time is up, or it was cancelled), if it still waits;
    /// those behind it that fit now are admitted.
    private func giveUp(_ id: UInt64) {
        let (waiter, admitted): (Waiter?, [CheckedContinuation<Bool, Never>]) = state.withLock { state in
            if let index = state.encodedWaiting.firstIndex(where: { $0.id == id }) {
                return (state.encodedWaiting.remove(at: index), [])
            }
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return (nil, []) }
            let waiter = state.waiting.remove(at: index)
            if waiter.use == .encoded { state.encodedHeld -= waiter.bytes }
            return (waiter, admitWaiters(&state))
        }
        waiter?.continuation.resume(returning: false)
        for continuation in admitted { continuation.resume(returning: true) }
    }

    /// The waiters that fit now, their bytes reserved: encoded ones that pass the encoded bound
    /// join the line, then the head of the line while it fits.
    private func admitWaiters(_ state: inout State) -> [CheckedContinuation<Bool, Never>] {
        while let first = state.encodedWaiting.first, state.encodedFits(first.bytes, limit: encodedLimit) {
            state.encodedHeld += first.bytes
            state.waiting.append(state.encodedWaiting.removeFirst())
        }
        var admitted: [CheckedContinuation<Bool, Never>] = []
        while let first = state.waiting.first, makeRoom(first.bytes, &state) {
            state.reserved += first.bytes
            admitted.append(state.waiting.removeFirst().continuation)
        }
        return admitted
    }

    /// Whether `bytes` more fit, after asking the caches to give back what is missing.
    private func makeRoom(_ bytes: Int, _ state: inout State) -> Bool {
        var used = Self.used(state)
        guard used + bytes > limit else { return true }
        for reclaimable in state.reclaimables.values {
            let cost = reclaimable.cost()
            guard cost > 0 else { continue }
            reclaimable.reclaim(max(0, cost - (used + bytes - limit)))
            used = Self.used(state)
            if used + bytes <= limit { return true }
        }
        return false
    }

    private static func used(_ state: State) -> Int {
        state.reclaimables.values.reduce(state.reserved) { $0 + $1.cost() }
    }
}

/// Why the ``MemoryBudget`` refused a reservation.
public enum MemoryBudgetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No room for `requested` bytes within the wait allowed (or more than the whole `limit`).
    case overBudget(requested: Int, limit: Int)
    /// The task was cancelled while it waited.
    case cancelled

    public var description: String {
        switch self {
        case let .overBudget(requested, limit): "\(requested) bytes do not fit the memory budget of \(limit) bytes"
        case .cancelled: "cancelled while waiting for memory"
        }
    }
}
