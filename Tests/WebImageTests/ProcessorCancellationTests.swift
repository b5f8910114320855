import Foundation
import Testing
@testable import WebImage

/// Whole-image passes that had no look at the cancel inside (issue 25, "Deadlines stop the
/// work"): trim's scan of a uniform image, flatten, tint, greyscale, and the flips and quarter
/// turns. Each took one to a few tenths of a second at 49 MP in a release build after a 504. They
/// now stop within a band of rows (``PixelOperations/inRowBatches(rows:bytesPerRow:_:)``).
extension HeavyTests {
    @Suite("A cancel stops every whole-image processor within a band of rows")
    struct ProcessorCancellationTests {
        /// 4000 × 4000 of one translucent colour (premultiplied): trim finds no content and scans
        /// it all, flatten has alpha to lay over. One pass takes tenths of a second in a debug build.
        static let image = Image(
            format: .png, pixelWidth: 4000, pixelHeight: 4000,
            pixels: [UInt8](repeating: 100, count: 4000 * 4000 * 4).enumerated().map { $0.offset % 4 == 3 ? 128 : $0.element },
            isOpaque: false)

        static let steps: [String: any ImageProcessing] = [
            "trim": ImageProcessors.Trim(threshold: 10),
            "flatten": ImageProcessors.Flatten(.white),
            "tint": ImageProcessors.Tint(RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)),
            "grayscale": ImageProcessors.Grayscale(),
            "rotate 90": ImageProcessors.Rotate(degrees: 90),
            "rotate 180": ImageProcessors.Rotate(degrees: 180),
            "flip": ImageProcessors.Flip(.horizontal),
        ]

        /// Twenty passes of one processor, cancelled after 300 ms of its thread's CPU: the
        /// processing throws `.cancelled` and uses under 100 ms of CPU after the cancel. Before,
        /// the pass under way ran to its end: measured in a debug build, trim 7.9 s after the
        /// cancel, flatten 2.5 s, tint and greyscale 1.7 s, a quarter turn 0.9 s, a flip 0.12 s (a
        /// half turn copies whole rows and was already under the bound).
        @Test(arguments: ["trim", "flatten", "tint", "grayscale", "rotate 90", "rotate 180", "flip"])
        func aCancelStopsTheStepUnderWay(_ name: String) async throws {
            let steps = Array(repeating: try #require(Self.steps[name]), count: 20)
            let (result, spent) = await Self.processCancelled(Self.image, by: steps, afterUsing: .milliseconds(300))
            #expect(throws: ImageProcessingError.cancelled) { try result.get() }
            #expect(spent < .milliseconds(100), "\(name) used \(spent) of CPU after the cancel")
        }

        /// `image` processed by `steps` on a thread of its own (long work would hold a thread of
        /// the tests' cooperative pool), cancelled after `cpu` of that thread's time: the outcome,
        /// and the CPU time the processing used after the cancel.
        static func processCancelled(
            _ image: Image, by steps: [any ImageProcessing], afterUsing cpu: Duration
        ) async -> (Result<Image, ImageProcessingError>, Duration) {
            let executor = ImageWorkExecutor(threads: 1, name: "test-step-cancel")
            defer { executor.shutdown() }
            let job = JobThread()
            let work = Task(executorPreference: executor) { () -> (Result<Image, ImageProcessingError>, Duration) in
                let clock = job.started()
                let result = Result { () throws(ImageProcessingError) -> Image in try image.processed(by: steps) }
                return (result, clock.used)
            }
            let spentAtCancel = await job.cancel(work, afterUsing: cpu)
            let (result, spentAtEnd) = await work.value
            return (result, spentAtEnd - spentAtCancel)
        }

        /// A turn or flip stopped by a cancel throws `.cancelled` itself, called directly as a
        /// library user would, rather than handing back a picture with rows never written.
        @Test func aStoppedTurnThrowsRatherThanReturnAnUnfinishedPicture() async throws {
            let side = 512
            let image = Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: [UInt8](repeating: 77, count: side * side * 4), isOpaque: true)
            let steps: [any ImageProcessing] = [ImageProcessors.Rotate(degrees: 90), ImageProcessors.Flip(.vertical)]
            let errors = await Task.detached { () -> [ImageProcessingError?] in
                withUnsafeCurrentTask { $0?.cancel() }
                var errors: [ImageProcessingError?] = []
                for step in steps {
                    do throws(ImageProcessingError) {
                        _ = try step.process(image)
                        errors.append(nil)
                    } catch { errors.append(error) }
                }
                return errors
            }.value
            #expect(errors == [ImageProcessingError.cancelled, ImageProcessingError.cancelled])
            // Not cancelled, the same steps move every pixel.
            #expect(try ImageProcessors.Rotate(degrees: 90).process(image).pixels.allSatisfy { $0 == 77 })
            #expect(try ImageProcessors.Flip(.vertical).process(image).pixels.allSatisfy { $0 == 77 })
        }
    }
}
