import Foundation
import WebImage

/// The body of one ``URLSessionDataLoader`` transfer, between libcurl's thread and the one reader.
///
/// FoundationNetworking cannot hold the sender back (see docs/architecture/choices.md), so what arrives
/// while the reader is busy must wait in memory. It waits in one buffer: a reader that falls
/// behind takes the whole backlog in one step and catches up with one copy, instead of one
/// wake-up per ~16 KB chunk, which keeps the backlog (and the peak memory) small.
final class BodyChannel: Sendable {
    private struct State {
        var pending = Data()
        var waiter: CheckedContinuation<Data?, any Error>?
        /// Set once the sender is done: `.success` for a complete body.
        var end: Result<Void, any Error>?
        var readerGone = false
        var readerCancelled = false
        /// Body bytes handed to the reader so far, and the declared length, if any.
        var taken = 0
        var expected: Int?
        /// `pending` is a buffer of this channel's own (several chunks), not a chunk as received.
        var coalesced = false
    }

    /// A coalescing buffer is sized for the rest of a declared body up to this much, so a body
    /// kept as one buffer carries no spare capacity; past it, it grows as `Data` does.
    private static let reserveLimit = 4 << 20

    private let state = Locked(State())
    private let onReaderGone: @Sendable () -> Void

    /// `onReaderGone` runs once, when the reader is cancelled or drops the body.
    init(onReaderGone: @escaping @Sendable () -> Void) {
        self.onReaderGone = onReaderGone
    }

    /// Hands `data` to the waiting reader, or keeps it for the next read.
    func send(_ data: Data) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil, !state.readerGone else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                state.taken += data.count
                return waiter
            }
            if state.pending.isEmpty {
                state.pending = data
            } else if state.coalesced {
                state.pending.append(data)
            } else {
                let rest = state.expected.map { $0 - state.taken } ?? 0
                var buffer = Data()
                buffer.reserveCapacity(max(state.pending.count + data.count, min(rest, Self.reserveLimit)))
                buffer.append(state.pending)
                buffer.append(data)
                state.pending = buffer
                state.coalesced = true
            }
            return nil
        }
        waiter?.resume(returning: data)
    }

    /// The body's declared length (`Content-Length`), which sizes the coalescing buffer.
    func expect(_ length: Int) {
        state.withLock { $0.expected = length }
    }

    /// Ends the body after what is pending: complete without `error`, failed with it.
    func finish(_ error: (any Error)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = error.map { .failure($0) } ?? .success(())
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    /// The next part of the body (everything that arrived since the last read), or nil at its end.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let ready = state.withLock { state -> Result<Data?, any Error>? in
                    if !state.pending.isEmpty {
                        defer { state.pending = Data(); state.coalesced = false }
                        state.taken += state.pending.count
                        return .success(state.pending)
                    }
                    if let end = state.end { return end.map { nil } }
                    if state.readerCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
                state.readerCancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
            readerGone()
        }
    }

    /// The reader stopped: nothing more is kept, and a transfer still sending is stopped.
    ///
    /// A body that has ended needs no stop: either the transfer is over, or whoever ended it
    /// early (the size limit) stopped it then. A cancel of a finished task is what
    /// FoundationNetworking can trap on (see ``SessionDelegate/cancelLater(_:)``).
    func readerGone() {
        let (first, ended) = state.withLock { state -> (Bool, Bool) in
            defer { state.readerGone = true; state.pending = Data() }
            return (!state.readerGone, state.end != nil)
        }
        if first, !ended { onReaderGone() }
    }
}

/// A ``BodyChannel`` as an `AsyncSequence`; when the last copy is released, the reader is gone.
struct ChannelBody: AsyncSequence, Sendable {
    typealias Element = Data

    /// Tells the channel when the body is dropped (the sequence and its iterators released).
    final class ReaderToken: Sendable {
        let channel: BodyChannel
        init(_ channel: BodyChannel) { self.channel = channel }
        deinit { channel.readerGone() }
    }

    private let token: ReaderToken

    init(_ channel: BodyChannel) {
        token = ReaderToken(channel)
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let token: ReaderToken
        mutating func next() async throws -> Data? { try await token.channel.next() }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(token: token) }
}
