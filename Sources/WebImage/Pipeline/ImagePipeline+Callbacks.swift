import Foundation
public import Dispatch

/// Where completion-handler callbacks run.
///
/// ```swift
/// pipeline.loadImage(with: request, on: .queue(.main)) { result in … }
/// pipeline.loadImage(with: request, on: .actor(myModel)) { result in … }
/// ```
public enum CallbackTarget: Sendable {
    /// On this dispatch queue (in order).
    case queue(DispatchQueue)
    /// Isolated to this actor (in order).
    case actor(any Actor)
    /// Wherever the work finished; the cheapest.
    case immediate
}

extension ImagePipeline {
    /// Loads an image for code that is not `async`: `progress` and `completion` run on `target`,
    /// in order. `completion` runs once — twice with ``ImageLoadingOptions/refreshCached`` when
    /// the cached image is delivered first and the revalidated one differs (as in SDWebImage).
    /// Cancelling the returned task ends with ``ImagePipelineError/cancelled``.
    ///
    /// ```swift
    /// let task = pipeline.loadImage(with: ImageRequest(url: url), on: .queue(.main),
    ///     progress: { print($0.received) },
    ///     completion: { result in if case .success(let response) = result { show(response.image) } })
    /// task.cancel()
    /// ```
    @discardableResult
    public func loadImage(
        with request: ImageRequest, on target: CallbackTarget = .immediate,
        progress: (@Sendable (DownloadProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ImageResponse, ImagePipelineError>) -> Void
    ) -> ImageTask {
        let task = imageTask(with: request)
        Task.detached {
            for await event in task.events {
                switch event {
                case .progress(let value): if let progress { await target.run { progress(value) } }
                case .response(let response, _): await target.run { completion(.success(response)) }
                case .finished(.failure(let error)): await target.run { completion(.failure(error)) }
                default: break
                }
            }
        }
        return task
    }
}

extension CallbackTarget {
    /// Runs `body` on the target and returns when it has run, so callbacks keep their order.
    func run(_ body: @escaping @Sendable () -> Void) async {
        switch self {
        case .immediate: body()
        case .queue(let queue): await withCheckedContinuation { done in queue.async { body(); done.resume() } }
        case .actor(let actor): await Self.run(on: actor, body)
        }
    }

    private static func run(on actor: isolated any Actor, _ body: @Sendable () -> Void) { body() }
}
