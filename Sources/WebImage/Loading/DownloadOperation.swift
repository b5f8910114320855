import Foundation
import Logging
import Synchronization

/// One shared download: resolve (two-stage), then attempts with retries, each attempt waiting
/// for a queue slot, sending the request, validating the response and streaming the body.
///
/// SDWebImage's `SDWebImageDownloaderOperation`; one runs per identity however many callers wait.
struct DownloadOperation: Sendable {
    let request: ImageDownloadRequest
    let ticket: UInt64
    let context: DownloadContext
    /// The task running this operation: an attempt's timeout interrupts it.
    let handle: OperationHandle

    private var configuration: ImageDownloaderConfiguration { context.configuration }

    /// How the operation waits for its first slot: a look-up at low priority whatever its
    /// callers' (look-ups never starve image downloads); an image at its callers'.
    var firstSlotStage: QueueStage {
        guard configuration.resolvers.contains(where: { $0.claims(request.url) }) else { return Self.imageStage }
        return context.lookups.imageURL(for: request.url) == nil ? .fixed(.low) : Self.imageStageAfterLookup
    }

    private static let imageStage = QueueStage.followsCallers(floor: .veryLow)
    /// The image stage of a two-stage request outranks the look-ups.
    private static let imageStageAfterLookup = QueueStage.followsCallers(floor: .high)

    /// Runs the operation; it already holds the queue slot it was admitted with.
    func run() async throws -> DownloadResult {
        guard !Task.isCancelled else {
            // Its last caller left between admission and the task's start.
            context.queue.release()
            throw ImageDownloadError.cancelled
        }
        guard let resolver = configuration.resolvers.first(where: { $0.claims(request.url) }) else {
            return try await attempts(at: request.url, stage: Self.imageStage, holdingSlot: true, after: 0)
        }
        let lookup = LookupStage(context: context)
        if let cached = lookup.cachedImageURL(for: request.url) {
            return try await attempts(at: cached, stage: Self.imageStageAfterLookup, holdingSlot: true, after: 0)
        }
        // The image stage keeps the look-up's slot.
        let url: URL
        do {
            url = try await lookup.resolve(request.url, with: resolver)
        } catch {
            context.queue.release()
            throw error
        }
        return try await attempts(at: url, stage: Self.imageStageAfterLookup, holdingSlot: true, after: 0)
    }

    /// Attempts with retries, each waiting for a queue slot (unless the first already holds one).
    private func attempts(at url: URL, stage: QueueStage, holdingSlot: Bool, after previous: Int) async throws -> DownloadResult {
        var attempt = previous
        var holdingSlot = holdingSlot
        while true {
            if !holdingSlot {
                // At the callers' priority as the queue knows it by ticket: a retry keeps a
                // joiner's higher priority.
                try await acquire(stage)
            }
            holdingSlot = false
            let outcome = await attemptWithTimeout(url)
            context.queue.release()
            let failure: AttemptFailure
            switch outcome {
            case .success(let result): return result
            case .failure(let error): failure = error
            }
            attempt += 1
            guard let delay = configuration.retryPolicy.delay(beforeRetry: attempt, after: failure.error, retryAfter: failure.retryAfter) else {
                throw failure.error
            }
            context.logger.debug("retrying", metadata: ["url": "\(url)", "attempt": "\(attempt)", "error": "\(failure.error)"])
            context.metrics.retries.increment()
            if failure.interrupted {
                // The timeout cancelled this task: the retry continues in a new one.
                let next = attempt
                return try await handle.continueInNewTask {
                    try await Self.sleep(delay)
                    return try await self.attempts(at: url, stage: stage, holdingSlot: false, after: next)
                }
            }
            try await Self.sleep(delay)
        }
    }

    private static func sleep(_ delay: Duration) async throws(ImageDownloadError) {
        do { try await Task.sleep(for: delay) } catch { throw .cancelled }
    }

    private func acquire(_ stage: QueueStage) async throws(ImageDownloadError) {
        do {
            try await context.queue.acquire(ticket: ticket, stage: stage)
        } catch {
            throw .cancelled
        }
    }

    /// One attempt, bounded by the request's timeout (including the body).
    ///
    /// The attempt runs inline in this operation's task: no task per attempt. Its deadline
    /// interrupts the task through the handle; the failure then says so, and a retry continues
    /// in a new task.
    private func attemptWithTimeout(_ url: URL) async -> Result<DownloadResult, AttemptFailure> {
        let timeout = min(request.timeout ?? configuration.timeout, .longestTimeout)
        let outcome = AttemptDeadline()
        let generation = handle.generation
        let deadline = context.deadlines.arm(at: .now + timeout) { [handle] in
            if outcome.expire() { handle.interrupt(generation: generation) }
        }
        defer { context.deadlines.disarm(deadline) }
        do {
            let result = try await attempt(url, timeout: timeout, credentials: nil)
            _ = outcome.settle()  // unless it expired first, the deadline no longer interrupts the task
            return .success(result)
        } catch {
            if !outcome.settle() {
                if handle.isCancelled { return .failure(AttemptFailure(.cancelled)) }
                var failure = AttemptFailure(.timedOut)
                failure.interrupted = true
                return .failure(failure)
            }
            if let failure = error as? AttemptFailure { return .failure(failure) }
            return .failure(AttemptFailure(ImageDownloadError(transportError: error)))
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
    /// The timeout cancelled the operation's task: whatever follows must run in a new task.
    var interrupted = false
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

/// Decides, once, whether an attempt finished or its timeout expired first.
final class AttemptDeadline: Sendable {
    private enum State { case running, finished, expired }
    private let state = Mutex(State.running)

    /// The timer fired: true if the attempt was still running (it is now expired).
    func expire() -> Bool { state.withLock { state in state == .running ? { state = .expired; return true }() : false } }

    /// The attempt ended: false if the timeout had already expired it.
    func settle() -> Bool { state.withLock { state in state == .running ? { state = .finished; return true }() : false } }
}
