import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import WebImage

/// A ``DataLoading`` over Foundation's `URLSession` (libcurl-backed FoundationNetworking on
/// Linux), streaming bodies through a data delegate.
///
/// It passes the same behaviour tests as ``HTTPDataLoader``. Cookies and credentials are left
/// to ``ImageDownloader`` (the session's own cookie store and credential storage are off), and
/// redirects are capped at `maxRedirects`. A body declared larger than the request's
/// `maxBodySize` is refused from its head, and a body of unknown length is cut off at the limit.
///
/// Two things it cannot do on Linux, where ``HTTPDataLoader`` can: accept invalid TLS
/// certificates (see ``init(maxRedirects:allowsInvalidCertificates:)``), and hold the sender
/// back while the body is read slowly (libcurl reads ahead; what arrives waits in memory).
///
/// Not for untrusted origins on Linux: a `Content-Length` of about 2^63 or more traps inside
/// FoundationNetworking (swift-corelibs-foundation 6.3.1 converts libcurl's `Double` length with
/// `Int64(_:)` in its header callback) before this loader sees the response, so no check here can
/// catch it. ``HTTPDataLoader`` (the default, and what `webimage fetch` and `serve` use) refuses
/// such a body as too large. For the same reason of upstream bugs, a cancel that meets the
/// transfer's own failure in the same microseconds can trap in FoundationNetworking (upstream
/// issue #3296); this loader never cancels a transfer it has seen finish, which leaves only that
/// window.
///
/// ```swift
/// let downloader = ImageDownloader(loader: URLSessionDataLoader())
/// ```
public final class URLSessionDataLoader: DataLoading {
    private let session: URLSession
    private let delegate: SessionDelegate

    public init(maxRedirects: Int = 10) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = 16
        delegate = SessionDelegate(maxRedirects: maxRedirects)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: InlineDelegateQueue())
    }

    /// Not available: FoundationNetworking on Linux always verifies certificates.
    ///
    /// Use `HTTPDataLoader(allowsInvalidCertificates: true)` for a development server with a
    /// self-signed certificate. FoundationNetworking (swift-corelibs-foundation 6.3.1) offers no
    /// way in: it sends no server-trust authentication challenge (`URLSessionTask.swift` builds
    /// challenges only for a 401 response), `URLSessionConfiguration` has no TLS settings, and
    /// the only switch for libcurl's `CURLOPT_SSL_VERIFYPEER` — the environment variable
    /// `URLSessionCertificateAuthorityInfoFile=INSECURE_SSL_NO_VERIFY` in `EasyHandle.swift` —
    /// is compiled for Android only.
    @available(*, unavailable, message: "FoundationNetworking always verifies TLS certificates on Linux; use HTTPDataLoader(allowsInvalidCertificates: true)")
    public convenience init(maxRedirects: Int = 10, allowsInvalidCertificates: Bool) {
        self.init(maxRedirects: maxRedirects)
    }

    deinit { session.invalidateAndCancel() }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        var urlRequest = URLRequest(url: request.url)
        // FoundationNetworking keeps whole seconds of the interval (measured: 0.5 s timed out
        // at once, 1.5 s after 1 s), so it is rounded up, plus a second so that the
        // downloader's own deadline, which enforces the exact timeout, comes first.
        urlRequest.timeoutInterval = max(1, request.timeout.seconds.rounded(.up)) + 1
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        // The reader can go inside a delegate callback, on the session's work queue, where a
        // synchronous `cancel()` would deadlock: see `InlineDelegateQueue`.
        let channel = BodyChannel { delegate.cancelLater(task) }
        let response: DataResponse = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, TaskState(response: continuation, body: channel, maxBodySize: request.maxBodySize))
                task.resume()
            }
        } onCancel: {
            delegate.cancelLater(task)
        }
        return DataTransfer(response: response, body: DataBody(ChannelBody(channel)) { $0 })
    }
}

/// Runs URLSession's delegate calls at once, on the thread that makes them, instead of as
/// one `BlockOperation` each on a queue of their own.
///
/// FoundationNetworking hands every ~16 KB body chunk to the delegate queue; a queue hop per
/// chunk was the largest cost of this loader over plain `data(from:)` calls. Inline, the calls
/// run on the session's work queue (serial, in libcurl's order), which is safe because the
/// delegate's callbacks only take a short lock, resume continuations and yield to streams:
/// they never block, and never call a synchronous `URLSessionTask` method (`cancel()` runs
/// `workQueue.sync`, so the delegate cancels through ``SessionDelegate/cancelLater(_:)``).
final class InlineDelegateQueue: OperationQueue, @unchecked Sendable {
    override func addOperation(_ block: @Sendable @escaping () -> Void) { block() }
    override func addOperation(_ operation: Operation) { operation.start() }
}
