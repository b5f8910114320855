public import Foundation
public import Observation

/// An observable image load — what a SwiftUI view or any Observation-based UI binds to
/// (Nuke's `FetchImage`, SDWebImageSwiftUI's `ImageManager`).
///
/// Every property changes on the main actor, so `withObservationTracking` and SwiftUI see each
/// step: ``isLoading``, ``progress``, ``previews`` (with ``ImageLoadingOptions/progressiveLoad``),
/// then ``image`` or ``error``. A new ``load(_:)-(ImageRequest?)`` cancels the previous one, whose late results
/// are dropped; releasing the loader cancels its load.
///
/// ```swift
/// @State var loader = ImageLoader()
/// var body: some View {
///     ZStack { if let image = loader.image { Image(decorative: image.cgImage, scale: 1) } }
///         .task { loader.load(ImageRequest(url: url)) }
///         .onDisappear { loader.cancel() }
/// }
/// ```
@Observable
@MainActor
public final class ImageLoader {
    /// The loaded image (a memory-cache hit is set during ``load(_:)-(ImageRequest?)`` itself).
    public private(set) var image: Image?
    /// The previews of the current load, newest last (cleared by each load).
    public private(set) var previews: [Image] = []
    /// The download's progress, while it runs.
    public private(set) var progress: DownloadProgress?
    /// Why the last load failed (never ``ImagePipelineError/cancelled``).
    public private(set) var error: ImagePipelineError?
    /// The response of the last successful load.
    public private(set) var response: ImageResponse?
    /// Whether a load is running.
    public private(set) var isLoading = false
    /// The priority of loads (nil: the request's own); changing it re-prioritises the running load.
    public var priority: RequestPriority? {
        didSet { if let priority { operation.withLock { $0 }?.imageTask.priority = priority } }
    }

    /// The pipeline loads go through.
    @ObservationIgnored public let pipeline: ImagePipeline
    @ObservationIgnored private let operation = Locked<BindingOperation?>(nil)
    @ObservationIgnored private var generation: UInt64 = 0

    /// The running task, for tests and tools.
    var task: ImageTask? { operation.withLock { $0 }?.imageTask }

    public init(pipeline: ImagePipeline = .shared) {
        self.pipeline = pipeline
    }

    deinit {
        operation.withLock { $0 }?.cancel()
    }

    /// Loads `url` (nil clears).
    public func load(_ url: URL?) { load(url.map { ImageRequest(url: $0) }) }

    /// Cancels the running load and starts `request` (nil only clears the loader).
    public func load(_ request: ImageRequest?) {
        reset()
        guard var request else { return }
        if let priority { request.priority = priority }
        if let hit = pipeline.memoryResponse(for: request) {
            finish(.success(hit))
            return
        }
        isLoading = true
        let generation = self.generation
        let started = BindingOperation(pipeline: pipeline, request: request) { [weak self] event in
            guard let self, self.generation == generation else { return false }
            return self.apply(event)
        }
        operation.withLock { $0 = started }
    }

    /// Cancels the running load; ``image`` stays as it is.
    public func cancel() {
        generation += 1
        operation.withLock { $0.take() }?.cancel()
        isLoading = false
        progress = nil
    }

    private func reset() {
        cancel()
        image = nil
        previews = []
        error = nil
        response = nil
    }

    private func apply(_ event: ImageTask.Event) -> Bool {
        switch event {
        case .started: return true
        case .progress(let value): progress = value
        case .preview(let preview): previews.append(preview)
        case .response(let response, _):
            self.response = response
            image = response.image
        case .finished(let result):
            operation.withLock { $0 = nil }
            finish(result)
            return false
        }
        return true
    }

    private func finish(_ result: Result<ImageResponse, ImagePipelineError>) {
        isLoading = false
        switch result {
        case .success(let response):
            self.response = response
            image = response.image
        case .failure(.cancelled): break
        case .failure(let error): self.error = error
        }
    }
}
