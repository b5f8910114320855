import Foundation
import WebImage

/// One image as `fetch` writes it.
struct FetchedImage: Sendable {
    var data: Data
    var format: ImageFormat
    var source: ImageSource
    var revalidated: Bool
    /// The URL whose last path component names the file (its extension follows the format).
    var nameURL: URL
    /// The written image's pixel size.
    var width: Int
    var height: Int
    /// Where redirects led, when the response came from the network and was not the URL asked.
    var finalURL: URL?

    /// `memory`, `disk`, `network`, or `revalidated` (a `304` confirmed the disk copy).
    var sourceName: String { revalidated ? "revalidated" : "\(source)" }
}

/// How `fetch` turns a URL into bytes: the original through ``ImagePipeline/data(for:)`` (only
/// the header is read), fully decoded with `--verify`, or decoded, transformed and re-encoded
/// with `--resize` / `--format`.
struct FetchMode: Sendable {
    var transform: OutputTransform?
    var verify: Bool
    var options: ImageLoadingOptions
    /// Whether `X-Robots-Tag` opt-outs are honoured (``OptOut``; `--ignore-opt-out` turns it off).
    var honoursOptOut = true
    /// The agents whose `X-Robots-Tag` directives apply besides every agent's.
    var agents = [OptOut.agent]

    /// Throws ``OptOut`` when the response opted the image out, after removing what the
    /// pipeline cached of it (a cache hit has no response to check: nothing opted out is kept).
    private func checkOptOut(_ response: DataResponse?, _ requests: ImageRequest..., pipeline: ImagePipeline) async throws {
        guard honoursOptOut, let optOut = OptOut(response, agents: agents) else { return }
        // The pipeline's cache writes run in the background: wait for them (only now, for an
        // opted-out image, so that other loads never wait), then remove what they stored.
        await pipeline.flushPendingStores()
        for request in requests { await pipeline.removeCachedImage(for: request) }
        throw optOut
    }

    func fetch(_ request: ImageRequest, pipeline: ImagePipeline) async throws -> FetchedImage {
        if let transform {
            var imageRequest = request
            if let side = transform.decodingOptions.thumbnailMaxPixelSize { imageRequest = imageRequest.thumbnail(maxPixelSize: side) }
            // An animation kept animated is streamed from the original (below): the pipeline decodes its first frame only.
            if transform.decodingOptions.firstFrameOnly || transform.streamsAnimations { imageRequest = imageRequest.options(.decodeFirstFrameOnly) }
            if !transform.processors.isEmpty {
                imageRequest = imageRequest.processed(by: transform.processors)
                // Processed as an animation only when the output keeps one: the pipeline then
                // checks the whole animation's output before it processes the first frame. A
                // still output (JPEG, PNG) is one frame, processed as one.
                if !transform.decodingOptions.firstFrameOnly { imageRequest = imageRequest.options(.transformAnimatedImage) }
            }
            let response = try await pipeline.image(for: imageRequest)
            // The original is cached under its own key beside the processed variant.
            try await checkOptOut(response.httpResponse, imageRequest, request, pipeline: pipeline)
            if let streamed = try await streamedAnimation(response, request: request, pipeline: pipeline) { return streamed }
            // The export's copies and encoder buffers take room in the pipeline's memory budget,
            // beside the decoded image held meanwhile (a 49 MP PNG written as WebP peaked at
            // 500 MB a line, whatever --memory-budget-mb said).
            let image = response.image
            let held = image.frames.reduce(image.pixels.count) { $0.addingReportingOverflow($1.pixels.count).partialValue }
            let (price, overflow) = transform.export.memoryBytes(toExport: image).addingReportingOverflow(held)
            let reservation = try await pipeline.configuration.memoryBudget?.reserve(
                overflow ? .max : price, waitingAtMost: pipeline.configuration.memoryBudgetWait)
            defer { reservation?.release() }
            let (data, format) = try transform.apply(to: image)
            let written = try? pipeline.configuration.coders.readHeader(data)
            return FetchedImage(
                data: data, format: format, source: response.source, revalidated: response.isRevalidated,
                nameURL: request.url.deletingPathExtension().appendingPathExtension(format.fileExtension),
                width: written?.pixelWidth ?? response.image.pixelWidth, height: written?.pixelHeight ?? response.image.pixelHeight,
                finalURL: Self.redirected(request.url, response.httpResponse))
        }
        guard verify else {
            let original = try await pipeline.data(for: request)
            try await checkOptOut(original.httpResponse, request, pipeline: pipeline)
            return FetchedImage(original, nameURL: request.url)
        }
        // The original is stored before it is checked (waiting for the write, so that nothing
        // lands after the removal below); bytes the check refuses leave every cache, or the next
        // run without `--verify` would write them as a success.
        let request = request.options(.waitStoreCache)
        let original = try await pipeline.data(for: request)
        try await checkOptOut(original.httpResponse, request, pipeline: pipeline)
        // The check decodes outside the pipeline's stages, so it takes its room in the
        // pipeline's memory budget itself (no room is no verdict on the bytes: they stay).
        let options = pipeline.configuration.decodingOptions
        do {
            try options.checkPixelLimit(original.header)  // a bomb is refused as one, not as over the budget
        } catch {
            await pipeline.removeCachedImage(for: request)
            throw error
        }
        let reservation = try await pipeline.configuration.memoryBudget?.reserve(
            MemoryBudget.bytes(toDecode: original.header, options: options), waitingAtMost: pipeline.configuration.memoryBudgetWait,
            holding: original.reservedBytes)
        defer { reservation?.release() }
        do {
            try Self.verify(original.data, coders: pipeline.configuration.coders, options: options)
        } catch {
            await pipeline.removeCachedImage(for: request)
            throw error
        }
        return FetchedImage(original, nameURL: request.url)
    }

    /// The response's URL when it is not `url` (redirects were followed).
    static func redirected(_ url: URL, _ response: DataResponse?) -> URL? {
        guard let final = response?.url, final.absoluteString != url.absoluteString else { return nil }
        return final
    }

    /// Decodes the whole image; a partial one (its data ends early, ``Image/isPartial``) fails
    /// as ``ImagePipeline/image(for:)`` refuses it.
    private static func verify(_ data: Data, coders: ImageCoderRegistry, options: ImageDecodingOptions) throws(ImageDecodingError) {
        let image = try coders.decode(data, options: options)
        guard !image.isPartial else { throw .corrupt(format: image.format, reason: "data ends early (partial image)") }
    }
}

extension FetchedImage {
    /// The original bytes as they came, named after `nameURL`.
    init(_ original: ImageDataResponse, nameURL: URL) {
        self.init(
            data: original.data, format: original.header.format,
            source: original.source, revalidated: original.isRevalidated, nameURL: nameURL,
            width: original.header.pixelWidth, height: original.header.pixelHeight,
            finalURL: FetchMode.redirected(nameURL, original.httpResponse))
    }
}
