import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A ``DataLoading`` over Foundation's `URLSession` (libcurl-backed FoundationNetworking on
/// Linux), streaming bodies through a data delegate.
///
/// It passes the same behaviour tests as ``HTTPDataLoader``. Cookies and credentials are left
/// to ``ImageDownloader`` (the session's own cookie store and credential storage are off), and
/// redirects are capped at `maxRedirects`.
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
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
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
        let (body, bodyContinuation) = AsyncThrowingStream.makeStream(of: Data.self, bufferingPolicy: .unbounded)
        bodyContinuation.onTermination = { _ in task.cancel() }
        let response: DataResponse = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, TaskState(response: continuation, body: bodyContinuation, maxBodySize: request.maxBodySize))
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        return DataTransfer(response: response, body: DataBody(body) { $0 })
    }
}

/// What the delegate knows of one task.
struct TaskState: Sendable {
    var response: CheckedContinuation<DataResponse, any Error>?
    let body: AsyncThrowingStream<Data, any Error>.Continuation
    /// Past this many body bytes (declared or received) the transfer is stopped at once.
    let maxBodySize: Int?
    var received = 0
    var redirects = 0
    var redirectLimitExceeded = false
}

/// Routes URLSession's callbacks to each task's continuations.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let tasks = Mutex<[Int: TaskState]>([:])
    private let maxRedirects: Int

    init(maxRedirects: Int) {
        self.maxRedirects = maxRedirects
    }

    func register(_ task: URLSessionTask, _ state: TaskState) {
        tasks.withLock { $0[task.taskIdentifier] = state }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let continuation = tasks.withLock { $0[dataTask.taskIdentifier]?.response.take() }
        if tasks.withLock({ $0[dataTask.taskIdentifier]?.redirectLimitExceeded == true }) {
            continuation?.resume(throwing: ImageDownloadError.tooManyRedirects)
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse, let url = http.url ?? dataTask.originalRequest?.url else {
            continuation?.resume(throwing: ImageDownloadError.transport(underlying: URLError(.badServerResponse)))
            completionHandler(.cancel)
            return
        }
        let headers = http.allHeaderFields.map { HTTPField("\($0.key)", "\($0.value)") }
        let head = DataResponse(url: url, statusCode: http.statusCode, headers: headers)
        continuation?.resume(returning: head)
        // A body declared over the limit is not read at all: the caller refuses it from the head.
        let limit = tasks.withLock { $0[dataTask.taskIdentifier]?.maxBodySize }
        if let limit, let declared = head.expectedContentLength, declared > limit {
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    // No back-pressure: FoundationNetworking's `URLSessionTask.suspend()` on a running data task
    // traps in `_NativeProtocol.stopLoading()` (Swift 6.3.1, measured here), so the body stream
    // buffers what libcurl delivers; the consumer appends faster than loopback delivers.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (body, limitExceeded) = tasks.withLock { tasks -> (AsyncThrowingStream<Data, any Error>.Continuation?, Int?) in
            guard var state = tasks[dataTask.taskIdentifier] else { return (nil, nil) }
            state.received += data.count
            tasks[dataTask.taskIdentifier] = state
            if let limit = state.maxBodySize, state.received > limit { return (state.body, limit) }
            return (state.body, nil)
        }
        guard let limit = limitExceeded else {
            body?.yield(data)
            return
        }
        // Past the limit nothing more is kept: the consumer learns why, and the transfer stops.
        body?.finish(throwing: ImageDownloadError.tooLarge(limit: limit, declared: nil))
        dataTask.cancel()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let failure: (any Error)? = error.map { Self.map($0, redirectLimitExceeded: state.redirectLimitExceeded) }
        if let continuation = state.response {
            continuation.resume(throwing: failure ?? ImageDownloadError.transport(underlying: URLError(.badServerResponse)))
        }
        if let failure { state.body.finish(throwing: failure) } else { state.body.finish() }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        let allowed = tasks.withLock { tasks -> Bool in
            guard var state = tasks[task.taskIdentifier] else { return false }
            state.redirects += 1
            state.redirectLimitExceeded = state.redirects > maxRedirects
            tasks[task.taskIdentifier] = state
            return !state.redirectLimitExceeded
        }
        completionHandler(allowed ? request : nil)
    }

    private static func map(_ error: any Error, redirectLimitExceeded: Bool) -> ImageDownloadError {
        if redirectLimitExceeded { return .tooManyRedirects }
        let code = (error as? URLError)?.code ?? URLError.Code(rawValue: (error as NSError).code)
        switch code {
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .httpTooManyRedirects, .redirectToNonExistentLocation: return .tooManyRedirects
        case .badURL, .unsupportedURL: return .invalidURL("\(error)")
        default: return .transport(underlying: error)
        }
    }
}
