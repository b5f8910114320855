import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage

/// What ``SessionDelegate`` knows of one task of a ``URLSessionDataLoader``.
struct TaskState: Sendable {
    var response: CheckedContinuation<DataResponse, any Error>?
    let body: BodyChannel
    /// Past this many body bytes (declared or received) the transfer is stopped at once.
    let maxBodySize: Int?
    var received = 0
    var redirects = 0
    var redirectLimitExceeded = false
    /// The body was refused (over the limit): whatever libcurl still delivers is dropped.
    var refused = false
}

/// Routes URLSession's callbacks to each task's continuations.
///
/// The callbacks run inline on the session's work queue (``InlineDelegateQueue``): they must
/// not block, and cancel tasks only through ``cancelLater(_:)``.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let tasks = Locked<[Int: TaskState]>([:])
    private let maxRedirects: Int

    init(maxRedirects: Int) {
        self.maxRedirects = maxRedirects
    }

    func register(_ task: URLSessionTask, _ state: TaskState) {
        tasks.withLock { $0[task.taskIdentifier] = state }
    }

    /// Cancels `task` from another thread, unless it has already finished.
    ///
    /// Another thread: `URLSessionTask.cancel()` runs `workQueue.sync`, which deadlocks on the
    /// work queue itself, where the delegate's callbacks run. Only while running: in
    /// FoundationNetworking (swift-corelibs-foundation 6.3.1, upstream issue #3296) a cancel that
    /// meets the transfer's own failure can report the failure a second time after the session
    /// has forgotten the task, which traps ("Trying to access a behaviour for a task that in not
    /// in the registry"). A task whose completion this delegate has seen, or that is no longer
    /// running, is not cancelled; that leaves a window of microseconds, not the whole wait.
    func cancelLater(_ task: URLSessionTask) {
        DispatchQueue.global().async { [self] in
            // `.suspended`: not resumed yet (a caller cancelled before the request started).
            let tracked = tasks.withLock { $0[task.taskIdentifier] != nil }
            let state = task.state
            guard state == .suspended || (tracked && state == .running) else { return }
            task.cancel()
        }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        // FoundationNetworking ignores the disposition ("Ignoring disposition from completion
        // handler" in URLSessionTask.swift): stopping a transfer takes `cancel()`.
        completionHandler(.allow)
        let id = dataTask.taskIdentifier
        let http = response as? HTTPURLResponse
        guard let url = http?.url ?? dataTask.originalRequest?.url, let http else {
            refuse(dataTask, with: ImageDownloadError.transport(underlying: URLError(.badServerResponse)))
            return
        }
        if tasks.withLock({ $0[id]?.redirectLimitExceeded == true }) {
            refuse(dataTask, with: ImageDownloadError.tooManyRedirects)
            return
        }
        let headers = http.allHeaderFields.map { HTTPField("\($0.key)", "\($0.value)") }
        let head = DataResponse(url: url, statusCode: http.statusCode, headers: headers)
        // A body declared over the limit is not read: the transfer stops here, and the caller
        // refuses it from the head.
        let (continuation, body, tooLarge) = tasks.withLock { tasks -> (CheckedContinuation<DataResponse, any Error>?, BodyChannel?, ImageDownloadError?) in
            guard var state = tasks[id] else { return (nil, nil, nil) }
            let continuation = state.response.take()
            var tooLarge: ImageDownloadError?
            if let limit = state.maxBodySize, let declared = head.expectedContentLength, declared > limit {
                state.refused = true
                tooLarge = .tooLarge(limit: limit, declared: declared)
            }
            tasks[id] = state
            return (continuation, state.body, tooLarge)
        }
        if let tooLarge {
            body?.finish(tooLarge)
            cancelLater(dataTask)
        } else if let declared = head.expectedContentLength {
            body?.expect(declared)
        }
        continuation?.resume(returning: head)
    }

    /// Fails the task's head with `error` and stops the transfer.
    private func refuse(_ task: URLSessionTask, with error: ImageDownloadError) {
        let continuation = tasks.withLock { tasks -> CheckedContinuation<DataResponse, any Error>? in
            tasks[task.taskIdentifier]?.refused = true
            return tasks[task.taskIdentifier]?.response.take()
        }
        continuation?.resume(throwing: error)
        cancelLater(task)
    }

    // No back-pressure: FoundationNetworking cannot pause a running transfer (see
    // docs/architecture/choices.md), so the body channel keeps what libcurl delivers until it is read.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let (body, limitExceeded) = tasks.withLock { tasks -> (BodyChannel?, Int?) in
            guard var state = tasks[id], !state.refused else { return (nil, nil) }
            state.received += data.count
            if let limit = state.maxBodySize, state.received > limit {
                state.refused = true
                tasks[id] = state
                return (state.body, limit)
            }
            tasks[id] = state
            return (state.body, nil)
        }
        guard let limit = limitExceeded else {
            body?.send(data)
            return
        }
        // Past the limit nothing more is kept: the consumer learns why, and the transfer stops.
        body?.finish(ImageDownloadError.tooLarge(limit: limit, declared: nil))
        cancelLater(dataTask)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let failure: (any Error)? = error.map { Self.map($0, redirectLimitExceeded: state.redirectLimitExceeded) }
        if let continuation = state.response {
            continuation.resume(throwing: failure ?? ImageDownloadError.transport(underlying: URLError(.badServerResponse)))
        }
        state.body.finish(failure)
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
        if let tls = TLSFailure(error) { return .transport(underlying: tls) }
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
