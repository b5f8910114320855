import NIOCore
import WebImage

/// Whether a request's client is still there, for the work done on its behalf: set when the
/// connection closes or the client closes its sending side (`curl -m`, a browser tab closed,
/// a proxy giving up). Renders and queue waits listen for it, so a client that leaves stops
/// its render at the next row, frame or step and gives its slot back, as imgproxy and nginx
/// (`499`) do. One per connection, owned by ``ConnectionDeadlineHandler``; read from any thread.
///
/// A client that half-closes on purpose after its request (`shutdown(SHUT_WR)`) is taken to
/// have left too: HTTP/1.1 gives a server no way to tell the two apart, and nginx decides the same.
final class ConnectionWatch: Sendable {
    private struct State {
        var isClosed = false
        var nextToken = 0
        var listeners: [Int: @Sendable () -> Void] = [:]
    }
    private let state = Locked(State())

    /// Whether the client has gone.
    var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Calls `body` once when the client goes (at once if it has gone already). Returns a token
    /// for ``stopListening(_:)``: a kept-alive connection serves many requests, and each takes its
    /// listener away when its work ends.
    @discardableResult
    func onClose(_ body: @escaping @Sendable () -> Void) -> Int? {
        let token: Int? = state.withLock { state in
            guard !state.isClosed else { return nil }
            state.nextToken += 1
            state.listeners[state.nextToken] = body
            return state.nextToken
        }
        if token == nil { body() }
        return token
    }

    func stopListening(_ token: Int?) {
        guard let token else { return }
        state.withLock { _ = $0.listeners.removeValue(forKey: token) }
    }

    /// The client went: tells every listener, once.
    func close() {
        let listeners = state.withLock { state -> [@Sendable () -> Void] in
            guard !state.isClosed else { return [] }
            state.isClosed = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener() }
    }

    /// `wait` in a task of its own that the client's departure cancels, as a cancel of the
    /// caller does (at shutdown). Hummingbird does not cancel a handler whose client left, so a
    /// wait that should end then — for a render slot, for room in the memory budget — runs here.
    ///
    /// ```swift
    /// let slot = await ConnectionWatch.waiting(watch) { await queue.enter(client: name) }
    /// ```
    static func waiting<T: Sendable>(_ watch: ConnectionWatch?, _ wait: @escaping @Sendable () async -> T) async -> T {
        let task = Task { await wait() }
        let listener = watch?.onClose { task.cancel() }
        defer { watch?.stopListening(listener) }
        return await withTaskCancellationHandler { await task.value } onCancel: { task.cancel() }
    }

    /// The watch of the connection `channel` belongs to, when it was set up by
    /// ``ConnectionLimits/serverBuilder()`` (nil on a connection made another way).
    static func of(_ channel: any Channel) async -> ConnectionWatch? {
        try? await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: ConnectionDeadlineHandler.self).watch
        }.get()
    }
}
