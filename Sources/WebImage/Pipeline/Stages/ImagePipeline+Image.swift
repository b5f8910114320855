import Foundation
import Logging
import Tracing

extension ImagePipeline {
    /// The image stage's sharing key: the image key plus the options that change how it is made.
    func imageJobKey(_ request: ImageRequest) -> String {
        let data = dataJobKey(request), variant = request.variantSuffix
        let avoid = request.options.contains(.avoidDecode), noMemory = request.options.contains(.disableMemoryWrite)
        guard !variant.isEmpty || avoid || noMemory else { return data }  // the common case: no new string
        return CacheKeyEncoding.variant(data, variant + (avoid ? ";header" : "") + (noMemory ? ";nomem" : ""))
    }

    /// The final image, shared by every caller of one image key. Callers subscribe here only.
    @inline(__always)
    func sharedImage(
        for request: ImageRequest, subscriber id: UInt64, latestPriority: (@Sendable () -> RequestPriority)? = nil,
        onEvent: (@Sendable (StageEvent) -> Void)?
    ) async throws -> ImageResponse {
        try await imageWork.value(
            for: imageJobKey(request), subscriber: id, priority: request.priority, latestPriority: latestPriority, onEvent: onEvent
        ) {
            self.imageJob(request)
        }
    }

    /// The work of one image job (made only by the caller that starts it).
    func imageJob(_ request: ImageRequest) -> @Sendable (ImageContext) async throws -> ImageResponse {
        { context in
            self.metrics.imageJobs.increment()
            return try await withSpan("webimage.image") { span in
                span.attributes["webimage.url"] = request.url.absoluteString
                return try await self.makeImage(request, context: context)
            }
        }
    }

    /// Variant on disk → decoded original → processors → caches.
    func makeImage(_ request: ImageRequest, context: any StageContext) async throws -> ImageResponse {
        let processing = ProcessingContext(parent: context, request: request, pipeline: self)
        let decoded: DecodedImage
        switch await cachedVariant(for: request) {
        case .fresh(let response)?:
            return response
        case .stale(let variant)?:
            // The variant follows its original: ask for the original (a conditional request when
            // its entry is stale); the same bytes as the variant's serve the variant again.
            let original = try await originalData(for: request, in: context) { context.send($0) }
            if let response = await reuse(variant, for: request, original: original) { return response }
            decoded = try await self.decoded(original, request: request) { try await self.decodedImage(for: request, in: processing) }
        case nil:
            decoded = try await decodedImage(for: request, in: processing)
        }
        var image = decoded.image
        let processors = request.context.processors
        if !processors.isEmpty, image.isDecoded {
            let animated = request.options.contains(.transformAnimatedImage)
            if animated, image.frames.count <= 1, image.frameCount > 1 {
                // Only the first frame of an animation was decoded (to be streamed frame by frame,
                // as `fetch` does): the animation it stands for is checked as if every frame were
                // here, so a 4 KB GIF asked at 7000 × 7000 is refused before one frame is enlarged.
                let frames = min(image.frameCount, configuration.decodingOptions.maxFrameCount)
                let (width, height) = image.orientation.swapsWidthAndHeight ? (image.pixelHeight, image.pixelWidth) : (image.pixelWidth, image.pixelHeight)
                let size = ImageProcessors.outputSize(of: processors, width: width, height: height)
                do throws(ImageProcessingError) { try ImageProcessors.checkAnimation(size, frames: frames) } catch {
                    throw ImagePipelineError.processingFailed(error)
                }
            }
            let held = decoded.original.heldBytes + (decoded.reservation?.bytes ?? 0)
            let reservation = try await reserveMemory(toProcess: image, with: processors, animated: animated, holding: held)
            defer { reservation?.release() }
            counters.processings.add(1, ordering: .relaxed)
            let started = ContinuousClock.now
            defer { metrics.processDuration.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
            do {
                image = try withSpan("webimage.process") { _ in
                    try image.processed(by: processors, animated: animated)
                }
            } catch let error as ImageProcessingError {
                throw ImagePipelineError.processingFailed(error)
            }
        }
        // The box the memory cache keeps is the one the response holds: the weak layer.
        let reference = ImageReference(image)
        if image.isDecoded, request.context.storePolicy.final.contains(.memory), !request.options.contains(.disableMemoryWrite),
           decoded.original.mayKeepInMemory {
            configuration.memoryCache?.insert(reference, forKey: memoryImageKey(request, names: .some(decoded.original.varyNames)))
        }
        await storeVariant(image, original: decoded.original, request: request)
        let source = decoded.original.source
        switch source {
        case .network: metrics.networkLoads.increment()
        case .disk: metrics.diskImages.increment()
        case .memory: metrics.memoryHits.increment()
        }
        return ImageResponse(
            reference: reference, data: decoded.original.data, source: source, httpResponse: decoded.original.httpResponse,
            request: request, isRevalidated: decoded.original.isRevalidated, isStale: decoded.original.isStale)
    }

    /// Reserves in the memory budget what processing allocates: every processed frame kept,
    /// and the largest intermediate of one frame (each step's size from ``ImageProcessing/outputSize(width:height:)``);
    /// `holding`: what the budget already holds for this load (its body and decoded pixels).
    private func reserveMemory(
        toProcess image: Image, with processors: [any ImageProcessing], animated: Bool, holding: Int
    ) async throws(ImagePipelineError) -> MemoryBudget.Reservation? {
        guard let budget = configuration.memoryBudget else { return nil }
        var size = (width: image.pixelWidth, height: image.pixelHeight), peak = 0
        for processor in processors {
            size = processor.outputSize(width: size.width, height: size.height)
            peak = max(peak, MemoryBudget.area(size.width, size.height))
        }
        let frames = animated ? max(image.frames.count, 1) : 1
        let (kept, overflow) = MemoryBudget.area(size.width, size.height).multipliedReportingOverflow(by: frames)
        let (pixels, overflow2) = kept.addingReportingOverflow(peak)
        let bytes = overflow || overflow2 || pixels > Int.max / 4 ? Int.max : pixels * 4
        do {
            return try await budget.reserve(bytes, waitingAtMost: configuration.memoryBudgetWait, holding: holding)
        } catch {
            throw error == .cancelled ? .cancelled : .overBudget(error)
        }
    }
}

/// The image stage as its decode subscription sees it: priority passes through; previews are
/// processed like the final image before they go up.
private struct ProcessingContext: StageContext {
    let parent: any StageContext
    let request: ImageRequest
    let pipeline: ImagePipeline

    func onPriorityChange(_ observer: @escaping @Sendable (RequestPriority) -> Void) -> RequestPriority {
        parent.onPriorityChange(observer)
    }

    func send(_ event: StageEvent) {
        guard case .preview(let preview) = event, !request.context.processors.isEmpty else { return parent.send(event) }
        if let processed = try? preview.processed(by: request.context.processors) { parent.send(.preview(processed)) }
    }
}

extension CacheSerializer {
    /// Lossless unless nothing is lost by a lossy format: an opaque variant of a lossy original
    /// (JPEG, or lossy WebP) is stored in that format at quality 0.9; everything else — an image
    /// with alpha (a circle, rounded corners, an arbitrary rotation), a lossless original (PNG,
    /// GIF, APNG, lossless WebP, BMP, TIFF, …) — is stored losslessly: lossless WebP for a WebP
    /// original, APNG for other animations, PNG otherwise. A JPEG cannot hold alpha, so storing a
    /// circle as JPEG gave it opaque black corners after a restart.
    static func `default`(coders: ImageCoderRegistry) -> CacheSerializer {
        CacheSerializer { image, original in
            let (format, quality) = cacheFormat(for: image, original: original)
            return try? coders.encode(image, as: format, quality: quality)
        }
    }

    /// The format and quality ``default(coders:)`` stores `image` (made from `original`) as.
    static func cacheFormat(for image: Image, original: Data?) -> (ImageFormat, Double) {
        let lossyWebP = image.format == .webp && original.map { WebPContainer($0).hasLossyBitstream } ?? false
        if image.isOpaque, image.format == .jpeg || lossyWebP { return (image.format, 0.9) }
        if image.format == .webp { return (.webp, 1) }
        return (image.isAnimated ? .apng : .png, 1)
    }
}
