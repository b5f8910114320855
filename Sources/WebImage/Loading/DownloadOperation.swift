import Foundation
import Logging

/// One shared download: resolve (two-stage), then attempts with retries, each attempt waiting
/// for a queue slot, sending the request, validating the response and streaming the body.
///
/// SDWebImage's `SDWebImageDownloaderOperation`; one runs per identity however many callers wait.
struct DownloadOperation: Sendable {
    let request: ImageDownloadRequest
    /// The sharing key: names the shared download in the registry and its resumable bytes.
    let key: String
    let ticket: UInt64
    let context: DownloadContext
    /// The task running this operation: an attempt's timeout interrupts it.
    let handle: OperationHandle
    /// Where the body's bytes are reserved before they are read (the starting caller's budget).
    let memory: (any BodyMemoryReserving)?

    var configuration: ImageDownloaderConfiguration { context.configuration }

    /// How the operation waits for its first slot: a look-up at low priority whatever its
    /// callers' (look-ups never starve image downloads); an image at its callers'.
    var firstSlotStage: QueueStage {
        guard configuration.resolvers.contains(where: { $0.claims(request.url) }) else { return Self.imageStage }
        return context.lookups.imageURL(for: LookupStage(operation: self).cacheKey(for: request.url)) == nil
            ? Self.lookupStage : Self.imageStageAfterLookup
    }

    private static let imageStage = QueueStage.followsCallers(floor: .veryLow)
    private static let lookupStage = QueueStage.fixed(.low)
    /// The image stage of a two-stage request outranks the look-ups.
    private static let imageStageAfterLookup = QueueStage.followsCallers(floor: .high)

    /// What the attempts of one stage fetch.
    private enum Phase { case lookup, image }

    /// Runs the operation; it already holds the queue slot it was admitted with.
    func run() async throws -> DownloadResult {
        guard !Task.isCancelled else {
            // Its last caller left between admission and the task's start.
            context.queue.release()
            throw ImageDownloadError.cancelled
        }
        let timeout = min(request.timeout ?? configuration.timeout, .longestTimeout)
        guard let resolver = configuration.resolvers.first(where: { $0.claims(request.url) }) else {
            return try await attempts(.image, stage: Self.imageStage, timeout: timeout, holdingSlot: true) { try await self.attempt($0, at: request.url) }
        }
        let lookup = LookupStage(operation: self)
        if let cached = lookup.cachedImageURL(for: request.url) {
            return try await attempts(.image, stage: Self.imageStageAfterLookup, timeout: timeout, holdingSlot: true) { try await self.attempt($0, at: cached) }
        }
        // The look-up is a request like any other (modifier, credentials, cookies, retries, its
        // own timeout); on success the image stage keeps its slot.
        let lookupTimeout = min(configuration.lookupTimeout ?? configuration.timeout, .longestTimeout)
        let url = try await attempts(.lookup, stage: Self.lookupStage, timeout: lookupTimeout, holdingSlot: true) {
            try await lookup.resolve(request.url, with: resolver, timeout: $0)
        }
        let image: @Sendable () async throws -> DownloadResult = {
            try await self.attempts(.image, stage: Self.imageStageAfterLookup, timeout: timeout, holdingSlot: true) { try await self.attempt($0, at: url) }
        }
        // A look-up attempt that timed out interrupted this task: the image stage runs in a new one.
        if Task.isCancelled, !handle.isCancelled {
            return try await handle.continueInNewTask(image)
        }
        return try await image()
    }

    /// Attempts with retries, each waiting for a queue slot (unless the first already holds one).
    /// A successful look-up keeps its slot for the image stage; every other attempt releases it.
    private func attempts<T: Sendable>(
        _ phase: Phase, stage: QueueStage, timeout: Duration, holdingSlot: Bool, after previous: Int = 0,
        _ body: @escaping @Sendable (Duration) async throws -> T
    ) async throws -> T {
        var attempt = previous
        var holdingSlot = holdingSlot
        while true {
            if !holdingSlot {
                // At the callers' priority as the queue knows it by ticket: a retry keeps a
                // joiner's higher priority.
                try await acquire(stage)
            }
            holdingSlot = false
            let outcome = await attemptWithTimeout(timeout, body)
            if case .success(let value) = outcome, phase == .lookup { return value }
            context.queue.release()
            var failure: AttemptFailure
            switch outcome {
            case .success(let value): return value
            case .failure(let error): failure = error
            }
            if phase == .lookup { failure.error = failure.error.asLookupFailure }
            attempt += 1
            // The caller's budget is drawn only for a retry the policy allows.
            guard let delay = configuration.retryPolicy.delay(beforeRetry: attempt, after: failure.error, retryAfter: failure.retryAfter),
                  request.retryBudget?.draw() ?? true else {
                throw failure.error
            }
            context.logger.debug("retrying", metadata: ["url": "\(request.url)", "attempt": "\(attempt)", "error": "\(failure.error)"])
            context.metrics.retries.increment()
            if failure.interrupted {
                // The timeout cancelled this task: the retry continues in a new one.
                let next = attempt
                return try await handle.continueInNewTask {
                    try await Self.sleep(delay)
                    return try await self.attempts(phase, stage: stage, timeout: timeout, holdingSlot: false, after: next, body)
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

    /// One attempt, bounded by `timeout` (including the body).
    ///
    /// The attempt runs inline in this operation's task: no task per attempt. Its deadline
    /// interrupts the task through the handle; the failure then says so, and a retry continues
    /// in a new task.
    private func attemptWithTimeout<T: Sendable>(
        _ timeout: Duration, _ body: @Sendable (Duration) async throws -> T
    ) async -> Result<T, AttemptFailure> {
        let outcome = AttemptDeadline()
        let generation = handle.generation
        let deadline = context.deadlines.arm(at: .now + timeout) { [handle] in
            if outcome.expire() { handle.interrupt(generation: generation) }
        }
        defer { context.deadlines.disarm(deadline) }
        do {
            let result = try await body(timeout)
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
}

extension ImageDownloadError {
    /// A failure of the look-up stage as the caller sees it: wrapped, so that the message says
    /// which request failed (cancellation and unparsable answers stay as they are).
    var asLookupFailure: ImageDownloadError {
        switch self {
        case .cancelled, .resolverFailed, .lookupFailed, .requestRefused: self
        default: .lookupFailed(self)
        }
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
    private let state = Locked(State.running)

    /// The timer fired: true if the attempt was still running (it is now expired).
    func expire() -> Bool { state.withLock { state in state == .running ? { state = .expired; return true }() : false } }

    /// The attempt ended: false if the timeout had already expired it.
    func settle() -> Bool { state.withLock { state in state == .running ? { state = .finished; return true }() : false } }
}
