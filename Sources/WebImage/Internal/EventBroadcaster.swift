/// Fans events out to every open `AsyncStream`; a stream that ends is forgotten.
final class EventBroadcaster<Event: Sendable>: Sendable {
    private let state = Locked<(next: UInt64, continuations: [UInt64: AsyncStream<Event>.Continuation])>((0, [:]))

    func stream(bufferingNewest limit: Int = 1024) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(limit))
        let id = state.withLock { state in
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    var hasListeners: Bool { state.withLock { !$0.continuations.isEmpty } }

    /// Ends every open stream.
    func finish() {
        let targets = state.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in targets { continuation.finish() }
    }

    func send(_ event: Event) {
        let targets = state.withLock { Array($0.continuations.values) }
        for continuation in targets { continuation.yield(event) }
    }
}
