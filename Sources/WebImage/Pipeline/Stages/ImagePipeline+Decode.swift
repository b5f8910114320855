import Foundation
import Logging
import Tracing

extension ImagePipeline {
    /// The decoded original (thumbnail, first frame, scale-down applied), shared by every
    /// variant of one URL that decodes it the same way.
    func decodedImage(for request: ImageRequest, in parent: any StageContext) async throws -> DecodedImage {
        let key = CacheKeyEncoding.variant(dataJobKey(request), request.decodeSuffix + (request.options.contains(.avoidDecode) ? ";header" : ""))
        let id = decodeWork.makeSubscriberID()
        let priority = parent.onPriorityChange { [decodeWork] changed in decodeWork.setPriority(changed, key: key, subscriber: id) }
        return try await decodeWork.value(for: key, subscriber: id, priority: priority, onEvent: { parent.send($0) }) {
            self.decodeJob(request)
        }
    }

    /// The work of one decode job (made only by the subscriber that starts it).
    private func decodeJob(_ request: ImageRequest) -> @Sendable (DecodeContext) async throws -> DecodedImage {
        { context in
            self.metrics.decodeJobs.increment()
            return try await withSpan("webimage.decode") { _ in try await self.decode(request, context: context) }
        }
    }

    private func decode(_ request: ImageRequest, context: DecodeContext) async throws -> DecodedImage {
        let coders = request.context.coders ?? configuration.coders
        let previews = request.options.contains(.progressiveLoad)
            ? PreviewMaker(ProgressiveDecoder(decoder: coders, options: decodingOptions(for: request), minimumInterval: request.context.previewInterval))
            : nil
        let original = try await originalData(for: request, in: context) { event in
            context.send(event)
            if case .progress(let progress) = event, let partial = progress.partialData, let previews,
               progress.expected.map({ progress.received < $0 }) ?? true,
               let preview = previews.preview(from: partial) {
                context.send(.preview(preview))
            }
        }
        return try await decoded(original, request: request) { try await self.decode(request.options(.fromLoaderOnly), context: context) }
    }

    /// `original` decoded (its memory reserved first) and, once it decodes, committed to the
    /// caches. An undecodable disk entry is removed and `reload` loads the image again.
    func decoded(
        _ original: OriginalData, request: ImageRequest, reload: () async throws -> DecodedImage
    ) async throws -> DecodedImage {
        let coders = request.context.coders ?? configuration.coders
        let reservation = try await reserveMemory(toDecode: original.data, holding: original.heldBytes, request: request, coders: coders)
        do {
            let image = try decode(original.data, request: request, coders: coders)
            await commitOriginal(original, request: request)
            return DecodedImage(image: image, original: original, reservation: reservation)
        } catch {
            logger.debug("decoding failed", metadata: ["url": "\(request.url)", "source": "\(original.source)", "error": "\(error)"])
            // A cancel, a killed worker or a request's own limit says nothing against the bytes: the entry stays.
            guard original.source == .disk, !request.options.contains(.fromCacheOnly), error.blamesData else {
                if original.source == .network { failedURLs.remember(.decodingFailed(error), for: request.dataKey) }
                throw ImagePipelineError.decodingFailed(error)
            }
            // A cached entry that passed its checksum but does not decode: drop it, download again.
            logger.warning("undecodable disk cache entry removed", metadata: ["key": "\(request.dataKey)", "error": "\(error)"])
            await configuration.dataCache?.remove(key: request.dataKey)
            return try await reload()
        }
    }

    private func decode(_ data: Data, request: ImageRequest, coders: ImageCoderRegistry) throws(ImageDecodingError) -> Image {
        let scale = Image.scaleFactor(forKey: request.dataKey)
        if request.options.contains(.avoidDecode) {
            return Image(header: try coders.readHeader(data), scale: scale)
        }
        var options = decodingOptions(for: request)
        options.scale = scale
        counters.decodes.add(1, ordering: .relaxed)
        let started = ContinuousClock.now
        defer {
            metrics.decodeDuration.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
            logger.debug("decoded", metadata: ["key": "\(request.dataKey)", "bytes": "\(data.count)"])
        }
        let image = try coders.decode(data, options: options)
        // A partial image (the file ends early) is most likely a broken transfer: the pipeline
        // neither caches nor delivers it (the coders give it to direct callers, flagged).
        guard !image.isPartial else { throw .corrupt(format: image.format, reason: "data ends early (partial image)") }
        return image
    }

    /// Reserves in the memory budget what decoding `data` allocates (from its header: every
    /// frame kept, at the size the decode makes), waiting for room as configured. `nil` without a
    /// budget, for header-only requests, and for data whose header does not read or is over the
    /// pixel limit (the decode then fails on its own, with the typed error that says so).
    /// `holding`: what the budget already holds for `data`, kept while it decodes.
    private func reserveMemory(
        toDecode data: Data, holding: Int, request: ImageRequest, coders: ImageCoderRegistry
    ) async throws -> MemoryBudget.Reservation? {
        let options = decodingOptions(for: request)
        // Over the pixel limit, the decode refuses the file itself (a typed `tooManyPixels`), before
        // anything is allocated: nothing to reserve.
        guard let budget = configuration.memoryBudget, !request.options.contains(.avoidDecode),
              let header = try? coders.readHeader(data), (try? options.checkPixelLimit(header)) != nil else { return nil }
        do {
            return try await budget.reserve(
                MemoryBudget.bytes(toDecode: header, options: options, coders: coders), waitingAtMost: configuration.memoryBudgetWait, holding: holding)
        } catch {
            throw error == .cancelled ? ImagePipelineError.cancelled : ImagePipelineError.overBudget(error)
        }
    }

    /// The pipeline's decoding options with the request's thumbnail, first-frame and
    /// scale-down settings (the byte budget is the coders' ``ImageDecodingOptions/maxDecodedBytes``).
    func decodingOptions(for request: ImageRequest) -> ImageDecodingOptions {
        var options = configuration.decodingOptions
        if request.options.contains(.decodeFirstFrameOnly) { options.firstFrameOnly = true }
        options.thumbnailMaxPixelSize = request.context.thumbnailMaxPixelSize
        if request.options.contains(.scaleDownLargeImages) { options.maxDecodedBytes = request.context.scaleDownLimitBytes }
        return options
    }
}

/// The progressive decoder of one decode job (its events arrive one at a time, from the download).
final class PreviewMaker: Sendable {
    private let decoder: Locked<ProgressiveDecoder>
    init(_ decoder: ProgressiveDecoder) { self.decoder = Locked(decoder) }
    func preview(from prefix: Data) -> Image? { decoder.withLock { $0.update(with: prefix) } }
}
