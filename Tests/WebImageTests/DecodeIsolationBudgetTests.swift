import Foundation
import Testing
import WebImage
import WebImageOrigin

/// A decode in a worker process holds its pixels twice on the machine (the worker's copy until
/// sent, then this process's): every memory budget that prices a decode counts it so, the
/// pipeline's as well as the image server's (`MemoryBudget.bytes(toDecode:options:coders:)`).
@Suite("Isolated decodes are priced twice")
struct DecodeIsolationBudgetTests {
    /// Every decode goes to a worker that cannot start: a decode that got past the budget fails
    /// with `libraryUnavailable`, one refused by it with `overBudget`.
    static let isolated = ImageCoderRegistry.default.isolatingDecodes(
        DecodeIsolation(worker: .init(executable: "/nonexistent/webimage", arguments: []), minimumPixelCount: 0, keepsSpareWorker: false))

    @Test func thePriceDoublesForAWorkersDecodeOnly() throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        let header = try ImageCoderRegistry.default.readHeader(heic)
        #expect(MemoryBudget.bytes(toDecode: header, options: .default, coders: .default) == 64 * 48 * 4)
        #expect(MemoryBudget.bytes(toDecode: header, options: .default, coders: Self.isolated) == 2 * 64 * 48 * 4)
        let png = try PNGCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .png, quality: 1)
        #expect(MemoryBudget.bytes(toDecode: try ImageCoderRegistry.default.readHeader(png), options: .default, coders: Self.isolated) == 64 * 48 * 4)
        // Arithmetic that cannot trap: a price at the top of `Int` stays there.
        var huge = header
        huge.pixelWidth = .max / 3
        huge.pixelHeight = 3
        #expect(MemoryBudget.bytes(toDecode: huge, options: ImageDecodingOptions(maxPixelCount: .max), coders: Self.isolated) == .max)
    }

    /// A budget with room for one copy of the pixels but not two: the pipeline decodes in the
    /// process, and refuses the same image when its coders would decode it in a worker.
    @Test func thePipelinesBudgetCountsTheWorkersCopy() async throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        try await withOrigin(files: ["pattern.heic": heic]) { origin in
            let once = 64 * 48 * 4 + heic.count
            func pipeline(_ coders: ImageCoderRegistry) -> ImagePipeline {
                var configuration = ImagePipeline.Configuration(memoryCache: nil, coders: coders)
                configuration.memoryBudget = MemoryBudget(limit: once + 1000)
                configuration.memoryBudgetWait = .zero
                return ImagePipeline(configuration: configuration)
            }
            let inProcess = try await pipeline(.default).image(for: origin.imageURL("pattern.heic"))
            #expect(inProcess.image.pixelWidth == 64)
            await #expect(throws: ImagePipelineError.overBudget(.overBudget(requested: once + 64 * 48 * 4, limit: once + 1000))) {
                try await pipeline(Self.isolated).image(for: origin.imageURL("pattern.heic"))
            }
        }
    }
}
