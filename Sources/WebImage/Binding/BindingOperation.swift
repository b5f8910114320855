/// One load bound to a display: the pipeline's ``ImageTask`` and the main-actor task that hands
/// its events to the display, in order, while `deliver` says the load is still wanted.
///
/// Cancelling stops both: the image task (so shared work loses a caller and the download stops
/// when it was the last one) and the consumer (so nothing more is delivered).
final class BindingOperation: Sendable {
    let imageTask: ImageTask
    private let consumer = Locked<Task<Void, Never>?>(nil)

    /// Starts `request`; `deliver` runs on the main actor for each event and returns `false`
    /// when the display no longer wants this load (a newer one replaced it, the target is gone).
    @MainActor
    init(pipeline: ImagePipeline, request: ImageRequest, deliver: @escaping @MainActor (ImageTask.Event) -> Bool) {
        let task = pipeline.imageTask(with: request)
        imageTask = task
        let events = task.events
        consumer.withLock {
            $0 = Task { @MainActor in
                for await event in events where !deliver(event) {
                    task.cancel()
                    return
                }
            }
        }
    }

    func cancel() {
        imageTask.cancel()
        consumer.withLock { $0 }?.cancel()
    }
}

extension ImagePipeline {
    /// The memory cache's image for `request` as a response, looked up synchronously, so a
    /// display shows a cached image in the same main-actor turn (no placeholder flash).
    func memoryResponse(for request: ImageRequest) -> ImageResponse? {
        let request = identified(request)
        guard request.options.readsMemory, let reference = configuration.memoryCache?.reference(forKey: memoryImageKey(request)) else { return nil }
        metrics.memoryHits.increment()
        return ImageResponse(reference: reference, data: nil, source: .memory, request: request)
    }
}
