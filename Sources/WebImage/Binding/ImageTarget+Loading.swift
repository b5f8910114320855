extension ImageTarget {
    /// Loads `request` into this target: SDWebImage's `sd_setImageWithURL:placeholderImage:options:progress:completed:`.
    ///
    /// In order, on the main actor: any previous load under `operationKey` is cancelled; a
    /// memory-cache hit is displayed at once (no placeholder); otherwise the placeholder is
    /// displayed (nil clears the target; not with ``ImageTargetOptions/delayPlaceholder``),
    /// then progress, previews (with ``ImageTargetOptions/showPartialPreviews``), and the final
    /// image (through `transition` when one is given) — or, on failure, `failureImage` (or the
    /// delayed placeholder) and ``ImageTarget/displayFailure(_:forKey:)``. `completed` runs last,
    /// once; a load that was replaced or cancelled through the registry delivers nothing more
    /// and does not complete.
    ///
    /// ```swift
    /// cell.setImage(
    ///     with: ImageRequest(url: url).thumbnail(maxPixelSize: 256),
    ///     placeholder: gray, options: .showPartialPreviews, failureImage: broken,
    ///     progress: { print($0.fraction ?? 0) },
    ///     completed: { result in log(result) })
    /// ```
    ///
    /// - Returns: the running task (to change its priority), or nil when nothing loads (a nil
    ///   request, a memory hit).
    @discardableResult
    public func setImage(
        with request: ImageRequest?,
        placeholder: Image? = nil,
        options: ImageTargetOptions = [],
        operationKey: String = ImageOperationKey.image,
        failureImage: Image? = nil,
        transition: ImageTransition? = nil,
        registry: ImageOperationRegistry = .shared,
        pipeline: ImagePipeline = .shared,
        progress: (@MainActor (DownloadProgress) -> Void)? = nil,
        completed: (@MainActor (Result<ImageResponse, ImagePipelineError>) -> Void)? = nil
    ) -> ImageTask? {
        let generation = registry.begin(self, key: operationKey)
        let presenter = BindingPresenter(
            placeholder: placeholder, options: options, key: operationKey, failureImage: failureImage,
            transition: transition, progress: progress, completed: completed)
        guard var request else {
            if !options.contains(.delayPlaceholder) { display(placeholder, as: .placeholder, forKey: operationKey) }
            presenter.fail(self, .loadingFailed(.invalidURL("no URL")))
            return nil
        }
        if let hit = pipeline.memoryResponse(for: request) {
            presenter.succeed(self, hit)
            return nil
        }
        if !options.contains(.delayPlaceholder) { display(placeholder, as: .placeholder, forKey: operationKey) }
        if options.contains(.showPartialPreviews) { request.options.insert(.progressiveLoad) }
        let operation = BindingOperation(pipeline: pipeline, request: request) { [weak self] event in
            guard let self, registry.isCurrent(self, key: operationKey, generation: generation) else { return false }
            if case .finished = event { registry.finish(self, key: operationKey, generation: generation) }
            return presenter.deliver(event, to: self)
        }
        registry.attach(operation, to: self, key: operationKey, generation: generation)
        return operation.imageTask
    }

    /// Cancels this target's load under `key` (SDWebImage's `sd_cancelCurrentImageLoad`).
    ///
    /// ```swift
    /// cell.cancelImageLoad()
    /// ```
    public func cancelImageLoad(forKey key: String = ImageOperationKey.image, registry: ImageOperationRegistry = .shared) {
        registry.cancel(self, key: key)
    }
}

/// What one `setImage` call displays for each event, per its options.
@MainActor
struct BindingPresenter {
    let placeholder: Image?
    let options: ImageTargetOptions
    let key: String
    let failureImage: Image?
    let transition: ImageTransition?
    let progress: (@MainActor (DownloadProgress) -> Void)?
    let completed: (@MainActor (Result<ImageResponse, ImagePipelineError>) -> Void)?

    /// Displays `event`; returns whether more events are wanted.
    func deliver(_ event: ImageTask.Event, to target: any ImageTarget) -> Bool {
        switch event {
        case .started: return true
        case .progress(let value):
            target.displayProgress(value, forKey: key)
            progress?(value)
            return true
        case .preview(let image):
            if options.contains(.showPartialPreviews) { target.display(image, as: .preview, forKey: key) }
            return true
        case .response(let response, _):
            // Also the cached image that refreshCached delivers before revalidating.
            present(response, on: target)
            return true
        case .finished(.success(let response)):
            completed?(.success(response))
            return false
        case .finished(.failure(let error)):
            fail(target, error)
            return false
        }
    }

    func succeed(_ target: any ImageTarget, _ response: ImageResponse) {
        present(response, on: target)
        completed?(.success(response))
    }

    func fail(_ target: any ImageTarget, _ error: ImagePipelineError) {
        if error != .cancelled {
            if let failureImage {
                target.display(failureImage, as: .failure, forKey: key)
            } else if options.contains(.delayPlaceholder) {
                target.display(placeholder, as: .placeholder, forKey: key)
            }
            target.displayFailure(error, forKey: key)
        }
        completed?(.failure(error))
    }

    private func present(_ response: ImageResponse, on target: any ImageTarget) {
        guard !options.contains(.avoidAutoSetImage) else { return }
        if let transition, response.source != .memory || options.contains(.forceTransition) {
            transition.present(target, response.image, key)
        } else {
            target.display(response.image, as: .final, forKey: key)
        }
    }
}
