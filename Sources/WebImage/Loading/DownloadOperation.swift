import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import Synchronization

/// One shared download: resolve (two-stage), then attempts with retries, each attempt waiting
/// for a queue slot, sending the request, validating the response and streaming the body.
///
/// SDWebImage's `SDWebImageDownloaderOperation`; one runs per identity however many callers wait.
struct DownloadOperation: Sendable {
    let request: ImageDownloadRequest
    let ticket: UInt64
    let context: DownloadContext

    private var configuration: ImageDownloaderConfiguration { context.configuration }

    func run() async throws -> DownloadResult {
        var url = request.url
        var stagePriority: RequestPriority? = nil
        var holdingSlot = false
        if let resolver = configuration.resolvers.first(where: { $0.claims(request.url) }) {
            let lookup = LookupStage(context: context)
            if let cached = lookup.cachedImageURL(for: request.url) {
                url = cached
            } else {
                // Seed 002: look-ups wait at low priority, so they never starve image downloads;
                // the image stage then keeps the look-up's slot, outranking the other look-ups.
                try await acquire(.low)
                do {
                    url = try await lookup.resolve(request.url, with: resolver)
                } catch {
                    context.queue.release()
                    throw error
                }
                holdingSlot = true
            }
            stagePriority = .high
        }
        var attempt = 0
        while true {
            if !holdingSlot {
                // A caller that joined with a higher priority has already told the queue (by ticket).
                try await acquire(max(request.priority, stagePriority ?? .veryLow))
            }
            holdingSlot = false
            do {
                let result = try await attemptWithTimeout(url)
                context.queue.release()
                return result
            } catch {
                let failure = error
                context.queue.release()
                attempt += 1
                guard let delay = configuration.retryPolicy.delay(beforeRetry: attempt, after: failure.error, retryAfter: failure.retryAfter) else {
                    throw failure.error
                }
                context.logger.debug("retrying", metadata: ["url": "\(url)", "attempt": "\(attempt)", "error": "\(failure.error)"])
                context.metrics.retries.increment()
                do { try await Task.sleep(for: delay) } catch { throw ImageDownloadError.cancelled }
            }
        }
    }

    private func acquire(_ priority: RequestPriority) async throws(ImageDownloadError) {
        do {
            try Task.checkCancellation()
            try await context.queue.acquire(ticket: ticket, priority: priority)
        } catch {
            throw .cancelled
        }
    }

    /// One attempt, bounded by the request's timeout (including the body).
    ///
    /// The attempt runs in its own task so that the timeout can cancel it without cancelling
    /// this operation (which may still retry); the timer is an event-loop timer, not a task.
    private func attemptWithTimeout(_ url: URL) async throws(AttemptFailure) -> DownloadResult {
        let timeout = request.timeout ?? configuration.timeout
        let work = Task { try await self.attempt(url, timeout: timeout, credentials: nil) }
        let expired = Flag()
        let timer = HTTPClient.defaultEventLoopGroup.any().scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            expired.set()
            work.cancel()
        }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
        } catch {
            if expired.isSet { throw AttemptFailure(.timedOut) }
            if let failure = error as? AttemptFailure { throw failure }
            throw AttemptFailure(ImageDownloadError(transportError: error))
        }
    }

    private func attempt(_ url: URL, timeout: Duration, credentials: Credentials?) async throws -> DownloadResult {
        let resume = context.resumables.take(request.identity)
        var headers = configuration.headers + request.headers + (request.validators?.headers ?? [])
        if let credentials { headers.append(HTTPField("Authorization", credentials.basicAuthorization)) }
        if configuration.handlesCookies, let cookie = context.cookies.cookieHeader(for: url) { headers.append(HTTPField("Cookie", cookie)) }
        if let resume {
            headers.append(HTTPField("Range", "bytes=\(resume.data.count)-"))
            headers.append(HTTPField("If-Range", resume.validator))
        }
        var dataRequest = DataRequest(url: url, headers: headers, timeout: timeout, maxBodySize: configuration.maxBodySize)
        if let modifier = configuration.requestModifier {
            guard let modified = try await modifier(dataRequest) else { throw AttemptFailure(.requestRefused) }
            dataRequest = modified
        }
        context.events.send(.started(url))
        let transfer = try await context.loader.loadData(for: dataRequest)
        var response = transfer.response
        if let modifier = configuration.responseModifier { response = try await modifier(response) }
        context.events.send(.responseReceived(url, response))
        if configuration.handlesCookies {
            context.cookies.store(setCookie: response.headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value), from: response.url)
        }
        if response.statusCode == 401, credentials == nil,
           let answer = request.credentials ?? configuration.credentials,
           response.value(forHeader: "WWW-Authenticate")?.lowercased().hasPrefix("basic") == true {
            if let resume { context.resumables.restore(resume, for: request.identity) }
            return try await attempt(url, timeout: timeout, credentials: answer)
        }
        if response.statusCode == 304 { throw AttemptFailure(.notModified(response)) }
        var body = BodyAccumulator(
            limit: configuration.maxBodySize, key: request.identity, ticket: ticket, context: context, url: url)
        if response.statusCode == 206, let resume {
            guard Self.rangeStart(response) == resume.data.count else {
                throw AttemptFailure(.transport(underlying: RangeMismatch(expectedStart: resume.data.count)))
            }
            body.seed(resume.data, expectedTotal: resume.expectedLength ?? response.expectedContentLength.map { $0 + resume.data.count })
        } else {
            guard configuration.acceptableStatusCodes.contains(response.statusCode) else {
                throw AttemptFailure(.badStatusCode(response.statusCode), retryAfter: response.value(forHeader: "Retry-After"))
            }
            body.expectedTotal = response.expectedContentLength
        }
        try checkContentType(response)
        return try await body.collect(transfer.body, response: response)
    }

    private func checkContentType(_ response: DataResponse) throws(AttemptFailure) {
        guard let acceptable = configuration.acceptableContentTypes else { return }
        let type = response.value(forHeader: "Content-Type")?
            .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard acceptable.contains(type) else { throw AttemptFailure(.badContentType(type)) }
    }

    /// The first byte position of `Content-Range: bytes START-END/TOTAL`.
    static func rangeStart(_ response: DataResponse) -> Int? {
        guard let value = response.value(forHeader: "Content-Range"), value.lowercased().hasPrefix("bytes ") else { return nil }
        return Int(value.dropFirst(6).prefix { $0.isNumber })
    }
}

/// An attempt's failure and the server's `Retry-After`, if it sent one.
struct AttemptFailure: Error {
    var error: ImageDownloadError
    var retryAfter: String?
    init(_ error: ImageDownloadError, retryAfter: String? = nil) {
        self.error = error
        self.retryAfter = retryAfter
    }
}

/// A `206` whose range does not continue the bytes kept.
struct RangeMismatch: Error, CustomStringConvertible {
    var expectedStart: Int
    var description: String { "the server resumed at another offset than \(expectedStart)" }
}

/// A flag set once, read from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
