import Foundation

/// `--per-host N`: at most N images of one host load at once, whatever the overall concurrency.
actor HostLimiter {
    private let limit: Int
    private var running: [String: Int] = [:]
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    init(limit: Int) { self.limit = limit }

    func acquire(_ host: String) async {
        if running[host, default: 0] < limit {
            running[host, default: 0] += 1
            return
        }
        await withCheckedContinuation { waiting[host, default: []].append($0) }
    }

    /// Hands the slot to the next waiter of `host`, if any.
    func release(_ host: String) {
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            next.resume()
        } else {
            running[host, default: 1] -= 1
            if running[host] == 0 { running[host] = nil }
        }
    }
}
