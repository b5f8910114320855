import Foundation
import WebImage

extension FetchMode {
    /// An animated source written frame by frame when the output keeps it animated (`--format gif|webp`
    /// or the source's format): the pipeline decoded only the first frame, and the original's
    /// bytes — from the response, or from the cache the load just filled — are transcoded one
    /// frame at a time (``ImageExport/exportAnimation(_:options:coders:)``), so a long animation
    /// costs a few canvases, not every frame. `nil` for stills and what cannot be streamed.
    ///
    /// The work runs on the pipeline's work threads (where its decodes run) after reserving four
    /// canvases in its memory budget.
    func streamedAnimation(_ response: ImageResponse, request: ImageRequest, pipeline: ImagePipeline) async throws -> FetchedImage? {
        guard let transform, transform.streamsAnimations, response.image.frameCount > 1 else { return nil }
        let original: Data, loaded: ImageDataResponse?
        if let data = response.data {
            (original, loaded) = (data, nil)
        } else {
            loaded = try await pipeline.data(for: request)
            original = loaded?.data ?? Data()
        }
        var export = transform.export
        export.processors = transform.processors
        let options = transform.decodingOptions, coders = pipeline.configuration.coders
        var canvas = try coders.readHeader(original)
        canvas.frameCount = 1
        let reservation = try await pipeline.configuration.memoryBudget?.reserve(
            4 * MemoryBudget.bytes(toDecode: canvas, options: options), waitingAtMost: pipeline.configuration.memoryBudgetWait,
            holding: loaded?.reservedBytes ?? 0)
        defer {
            reservation?.release()
            withExtendedLifetime(loaded) {}  // the original's share of the budget lasts until the export ends
        }
        let work = Task(executorPreference: pipeline.configuration.workExecutor) { () throws -> (data: Data, format: ImageFormat)? in
            try export.exportAnimation(original, options: options, coders: coders)
        }
        guard let (data, format) = try await withTaskCancellationHandler(operation: { try await work.value }, onCancel: { work.cancel() })
        else { return nil }
        let written = try? coders.readHeader(data)
        return FetchedImage(
            data: data, format: format, source: response.source, revalidated: response.isRevalidated,
            nameURL: request.url.deletingPathExtension().appendingPathExtension(format.fileExtension),
            width: written?.pixelWidth ?? 0, height: written?.pixelHeight ?? 0)
    }
}
