import Foundation
import WebImage

/// An animation `show` plays one frame at a time from the original's bytes, as SDWebImage's
/// `SDAnimatedImageView` does: the pipeline decoded only the first frame (the cell's still),
/// and each later frame is composited when it is due, so a long animation costs a couple of
/// canvases, not every frame (issue 25, "Animations stream").
///
/// The canvases are reserved in the pipeline's memory budget while the animation plays; frames
/// are decoded on the pipeline's work threads, never on the main actor.
struct ShowAnimation: Sendable {
    let frameCount: Int
    let loopCount: Int
    private let decoder: any AnimatedImageDecoding
    private let executor: ImageWorkExecutor?
    private let reservation: MemoryBudget.Reservation?
    /// The original bytes' response: its share of the memory budget lasts as long as the animation.
    private let original: ImageDataResponse

    /// The animation of `request`'s original bytes (from the cache the load just filled), or `nil`
    /// when its format is decoded only all at once (then the cell keeps the first frame).
    static func open(_ request: ImageRequest, pipeline: ImagePipeline) async throws -> ShowAnimation? {
        let original = try await pipeline.data(for: request), data = original.data
        let coders = pipeline.configuration.coders
        var canvas = try coders.readHeader(data)
        canvas.frameCount = 1
        // The canvas and what disposal keeps of the previous frame.
        let reservation = try await pipeline.configuration.memoryBudget?.reserve(
            2 * MemoryBudget.bytes(toDecode: canvas, options: .default), waitingAtMost: pipeline.configuration.memoryBudgetWait,
            holding: original.reservedBytes)
        guard let decoder = try coders.animatedDecoder(for: data), decoder.frameCount > 1 else { return nil }
        return ShowAnimation(
            frameCount: decoder.frameCount, loopCount: decoder.loopCount, decoder: decoder,
            executor: pipeline.configuration.workExecutor, reservation: reservation, original: original)
    }

    func duration(at index: Int) -> Duration { decoder.duration(at: index) }

    /// Frame `index` as a still image, decoded on the pipeline's work threads. In order is
    /// cheapest: each frame then costs one frame's decode.
    func frame(at index: Int) async throws -> Image {
        let decoder = decoder
        let work = Task(executorPreference: executor) { () throws -> Image in
            let frame = try decoder.frame(at: index)
            return Image(format: decoder.format, pixelWidth: decoder.pixelWidth, pixelHeight: decoder.pixelHeight, frames: [frame], loopCount: 0)
                .frame(at: 0)
        }
        return try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() }
    }
}
