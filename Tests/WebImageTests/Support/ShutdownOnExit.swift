import AsyncHTTPClient

/// Shuts a test's `HTTPClient` down when the test leaves before its own `shutdown()` (a `try`
/// that threw): AsyncHTTPClient stops the whole process when a client is released running, so
/// one failed expectation would have ended every test after it (it did, under Thread Sanitizer's
/// slow timing). A client already shut down makes this a no-op.
///
/// ```swift
/// let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
/// defer { withExtendedLifetime(shutdownOnExit) {} }
/// ```
final class ShutdownOnExit {
    private let client: HTTPClient
    init(_ client: HTTPClient) { self.client = client }
    deinit { try? client.syncShutdown() }
}
