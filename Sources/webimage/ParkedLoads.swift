import Foundation
import WebImage

/// Loads `fetch` holds back while their host has `--per-host` loads running or is not due yet
/// (`--rate-per-host`, a back-off), so that a slow or rate-limited host does not take the run's
/// `--concurrency` slots with loads that only wait for it (head-of-line blocking): the list is
/// read on, other hosts' loads start, and a parked load starts as soon as its host has room and
/// is due. At most `capacity` loads are parked; past that a load starts and waits in
/// the ``HostLimiter`` as before, so memory stays bounded whatever the list holds.
///
/// ```swift
/// var parked = ParkedLoads(capacity: 1000)
/// if !parked.park(load, host: "example.org") { /* start it anyway: it waits for its host */ }
/// let next = await parked.next { host in await limiter.tryAcquire(host) }
/// ```
struct ParkedLoads {
    struct Load {
        var url: URL
        var entry: URLSource.Entry
        var sample: Int?
        /// The retries the line has left, shared with the downloader's (`--retries`).
        var budget: RetryBudget
    }

    let capacity: Int
    private var byHost: [String: [Load]] = [:]
    private(set) var count = 0
    /// The hosts with parked loads.
    var hosts: Dictionary<String, [Load]>.Keys { byHost.keys }

    init(capacity: Int) { self.capacity = capacity }

    /// Keeps `load` for later; `false` when `capacity` loads are parked already.
    mutating func park(_ load: Load, host: String) -> Bool {
        guard count < capacity else { return false }
        byHost[host, default: []].append(load)
        count += 1
        return true
    }

    /// Some parked load, without asking for a slot (the run's safety net: the load then waits
    /// for its host as an unparked one does).
    mutating func removeAny() -> Load? {
        guard let host = byHost.keys.first, var queue = byHost[host], !queue.isEmpty else { return nil }
        let load = queue.removeFirst()
        byHost[host] = queue.isEmpty ? nil : queue
        count -= 1
        return load
    }

    /// The oldest parked load of a host that `admits` it (took a slot for it), if any.
    mutating func next(admitting admits: (String) async -> Bool) async -> Load? {
        guard count > 0 else { return nil }
        for host in Array(byHost.keys) where await admits(host) {
            guard var queue = byHost[host], !queue.isEmpty else { continue }
            let load = queue.removeFirst()
            byHost[host] = queue.isEmpty ? nil : queue
            count -= 1
            return load
        }
        return nil
    }
}
