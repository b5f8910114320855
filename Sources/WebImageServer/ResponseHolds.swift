import Foundation
import Hummingbird
import NIOCore
import WebImage

/// The result bytes that image responses are still sending, counted in the server's memory
/// budget once per result however many connections send it, until the last has written it.
///
/// A response holds its whole result until its client has read it (or the request timeout ends
/// the connection), long after the render's reservation ended; and each response copied its
/// result into a buffer of its own. A client that asked for a 6 MB cached result on 250
/// connections and never read took 1.5 GB of memory the budget never saw; 48 unread 55 MB
/// results held 1.3 GB over a 1 GB budget (red team, stop 53). Now a response reserves its
/// result's bytes before it is answered (`503 over_budget` when no room comes within the
/// processing timeout, as a render's wait; a memory-cache hit, whose bytes exist already, is
/// counted at once so that hits answer while renders wait), shares them with every other response of the same
/// result (``key(for:etag:)``), and writes them in slices, each copied only when the connection
/// has room for it: a slow reader holds one slice, not a copy of the result.
///
/// ```swift
/// let hold = try await holds.hold(bytes: image.data.count, key: key)
/// return Response(status: .ok, headers: headers, body: ResponseHolds.body(image.data, holding: hold, channel: channel))
/// ```
final class ResponseHolds: Sendable {
    /// One response's share of a held result; ends (once) when released or deallocated.
    final class Hold: Sendable {
        private let end: Locked<(@Sendable () -> Void)?>

        init(_ end: @escaping @Sendable () -> Void) { self.end = Locked(end) }

        func release() { end.withLock { $0.take() }?() }

        deinit { release() }
    }

    private struct Entry {
        var responses: Int
        var reservation: MemoryBudget.Reservation
    }

    /// Bytes written to a connection at a time.
    static let slice = 64 << 10

    private let budget: MemoryBudget
    private let wait: Duration
    private let entries = Locked([String: Entry]())

    init(budget: MemoryBudget, waitingAtMost wait: Duration) {
        self.budget = budget
        self.wait = wait
    }

    /// The key of a shared result: its cache key and its validator (the same bytes).
    static func key(for cacheKey: String, etag: String) -> String { "\(cacheKey)\n\(etag)" }

    /// A share of `bytes` under `key` (`nil`: a result no other response sends), reserved now
    /// unless another response holds it already. A result that already lives in memory
    /// (`existing`: a memory-cache hit) is counted at once and never waits (cache hits answer while
    /// renders wait for room); any other waits for room like a render.
    func hold(bytes: Int, key: String?, existing: Bool = false) async throws(ImageServerError) -> Hold {
        let key = key ?? UUID().uuidString
        if entries.withLock({ entries in
            guard entries[key] != nil else { return false }
            entries[key]!.responses += 1
            return true
        }) {
            return makeHold(key)
        }
        let reservation: MemoryBudget.Reservation
        do throws(MemoryBudgetError) {
            reservation = existing ? budget.count(bytes) : try await budget.reserve(bytes, waitingAtMost: wait)
        } catch {
            if case .cancelled = error { throw .clientClosed }
            throw .overBudget
        }
        // Another response may have reserved the same result meanwhile: share its reservation.
        let spare = entries.withLock { entries -> MemoryBudget.Reservation? in
            if entries[key] != nil {
                entries[key]!.responses += 1
                return reservation
            }
            entries[key] = Entry(responses: 1, reservation: reservation)
            return nil
        }
        spare?.release()
        return makeHold(key)
    }

    private func makeHold(_ key: String) -> Hold {
        Hold { [self] in
            let ended = entries.withLock { entries -> MemoryBudget.Reservation? in
                guard var entry = entries[key] else { return nil }
                entry.responses -= 1
                if entry.responses > 0 {
                    entries[key] = entry
                    return nil
                }
                entries[key] = nil
                return entry.reservation
            }
            ended?.release()
        }
    }

    /// A body that writes `data` a slice at a time, each when `channel` has room, and ends
    /// `hold` when written (or when the connection fails).
    ///
    /// The channel's writer suspends only once its event loop has seen the connection fill, and
    /// a writer on another thread can hand it a whole result first (a 6 MB body was queued
    /// whole on a connection that read nothing); so after each slice the writer waits for the
    /// event loop to have taken it, and the next write waits for room.
    static func body(_ data: Data, holding hold: Hold, channel: (any Channel)?) -> ResponseBody {
        ResponseBody(contentLength: data.count) { writer in
            defer { hold.release() }
            var start = data.startIndex
            while start < data.endIndex {
                let end = data.index(start, offsetBy: slice, limitedBy: data.endIndex) ?? data.endIndex
                try await writer.write(ByteBuffer(bytes: data[start..<end]))
                if let channel { try await channel.eventLoop.submit {}.get() }
                start = end
            }
            try await writer.finish(nil)
        }
    }
}
