import Foundation
import Synchronization
import Testing
@testable import WebImage
import WebImageOrigin

extension MainActorTests {
    @Suite("Binding: targets, operation keys, stale guard, presentation order")
    @MainActor
    struct BindingTests {
        static func files() throws -> [String: Data] {
            var files = try NamedSizes.files([10, 20, 30])
            files["slow.png"] = try SampleImages.png(width: 64, height: 64)  // streamed slowly below
            return files
        }
        static let slowQuery = "chunk=256&stall=250"

        @Test func placeholderThenProgressThenPreviewsThenFinal() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let source = SampleImages.pattern(width: 400, height: 300, seed: 5)
                origin.setImage(try JPEGCoder(progressive: true).encode(source, as: .jpeg, quality: 0.9), named: "progressive.jpg")
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget()
                var request = ImageRequest(url: origin.imageURL("progressive.jpg", query: "chunk=2048&stall=40"))
                request.context.previewInterval = .milliseconds(20)
                var progressCalls = 0
                var results: [Result<ImageResponse, ImagePipelineError>] = []
                let task = target.setImage(
                    with: request, placeholder: NamedSizes.image(3), options: .showPartialPreviews,
                    registry: registry, pipeline: pipeline,
                    progress: { _ in progressCalls += 1 }, completed: { results.append($0) })
                #expect(task != nil)
                #expect(target.kinds() == ["placeholder"], "the placeholder is displayed at once")
                #expect(registry.isLoading(target))
                #expect(await waitUntil { !results.isEmpty })
                let kinds = target.kinds()
                #expect(kinds.first == "placeholder")
                #expect(kinds.last == "final")
                let firstPreview = try #require(kinds.firstIndex(of: "preview"), "kinds: \(kinds)")
                #expect(kinds.firstIndex(of: "progress")! < firstPreview)
                #expect(target.widths("final") == [400])
                #expect(target.widths("preview").allSatisfy { $0 == 400 })
                #expect(progressCalls > 0)
                #expect(results.count == 1 && (try? results[0].get())?.image.pixelWidth == 400)
                #expect(!registry.isLoading(target))
                // A second load of the same request is a memory hit: displayed at once, no placeholder.
                let again = target.setImage(with: request, placeholder: NamedSizes.image(3), registry: registry, pipeline: pipeline)
                #expect(again == nil)
                #expect(target.kinds().suffix(2) == ["final", "final"])
            }
        }

        @Test func aNewRequestCancelsThePreviousOneOfTheSameKey() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget()
                var completions: [Int?] = []
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("slow.png", query: Self.slowQuery)), registry: registry, pipeline: pipeline,
                    completed: { completions.append(try? $0.get().image.pixelWidth) })
                // The body has begun, so the replaced load has one to abandon.
                #expect(await waitUntil { origin.bytesSent(path: "/images/slow.png") > 0 })
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("w10.png")), registry: registry, pipeline: pipeline,
                    completed: { completions.append(try? $0.get().image.pixelWidth) })
                #expect(await waitUntil { completions == [10] })
                // The slow body was abandoned: the origin's next write failed.
                #expect(await waitUntil { origin.abortedBodies(path: "/images/slow.png") == 1 })
                try await Task.sleep(for: .milliseconds(100))
                #expect(completions == [10], "the replaced load never completes")
                #expect(target.widths("final") == [10])
                #expect(!target.entries.contains { $0.width == 64 })
            }
        }

        @Test func operationKeysAreIndependent() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget(), other = RecordingTarget()
                target.setImage(with: ImageRequest(url: origin.imageURL("w10.png", query: "delay=300")), registry: registry, pipeline: pipeline)
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("w20.png", query: "delay=300")), operationKey: ImageOperationKey.background,
                    registry: registry, pipeline: pipeline)
                other.setImage(with: ImageRequest(url: origin.imageURL("w30.png", query: "delay=300")), registry: registry, pipeline: pipeline)
                #expect(registry.runningCount == 3)
                #expect(registry.isLoading(target) && registry.isLoading(target, key: ImageOperationKey.background))
                #expect(await waitUntil { registry.runningCount == 0 })
                #expect(target.widths("final") == [10])
                #expect(target.widths("final", forKey: ImageOperationKey.background) == [20])
                #expect(other.widths("final") == [30])
                #expect(origin.abortedBodies(path: "/images/w10.png") == 0)
                // Cancelling one key leaves the other running.
                target.setImage(with: ImageRequest(url: origin.imageURL("slow.png", query: Self.slowQuery)), registry: registry, pipeline: pipeline)
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("w30.png", query: "delay=400&v=2")), operationKey: ImageOperationKey.background,
                    registry: registry, pipeline: pipeline)
                target.cancelImageLoad(registry: registry)
                #expect(!registry.isLoading(target) && registry.isLoading(target, key: ImageOperationKey.background))
                #expect(await waitUntil { target.widths("final", forKey: ImageOperationKey.background) == [20, 30] })
                #expect(target.widths("final") == [10])
            }
        }

        /// A result that is complete before the newer request starts, but reaches the main actor
        /// after it, is dropped: the main thread is held (not suspended) until the old load finished,
        /// so its events wait in the queue behind the new `setImage`.
        @Test func aLateResultOfAnOldRequestNeverLands() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget()
                var completions: [Int?] = []
                let started = target.setImage(
                    with: ImageRequest(url: origin.imageURL("w20.png", query: "delay=100")), registry: registry, pipeline: pipeline,
                    completed: { completions.append(try? $0.get().image.pixelWidth) })
                let old = try #require(started)
                let oldDone = Flag()
                Task.detached { _ = try? await old.response; oldDone.set() }
                holdMainThread(until: oldDone, timeout: 30)
                #expect(oldDone.isSet, "the old load finished while the main actor was held")
                // Newer request, slower than the old one; the old one's result is already waiting.
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("w30.png", query: "delay=200")), registry: registry, pipeline: pipeline,
                    completed: { completions.append(try? $0.get().image.pixelWidth) })
                #expect(await waitUntil { completions == [30] })
                #expect(target.widths("final") == [30], "entries: \(target.entries)")
                #expect(!target.entries.contains { $0.width == 20 })
                // And the usual order: the older request is still running when the newer one starts
                // and finishes first; the older one is cancelled and never lands.
                let slowTarget = RecordingTarget()
                let older = try #require(slowTarget.setImage(
                    with: ImageRequest(url: origin.imageURL("w20.png", query: "delay=250&v=3")), registry: registry, pipeline: pipeline))
                slowTarget.setImage(with: ImageRequest(url: origin.imageURL("w10.png")), registry: registry, pipeline: pipeline)
                #expect(await waitUntil { slowTarget.widths("final") == [10] })
                _ = try? await older.response
                try await Task.sleep(for: .milliseconds(200))
                #expect(slowTarget.widths("final") == [10])
            }
        }

        @Test func failureImageAndDelayedPlaceholder() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget()
                var result: Result<ImageResponse, ImagePipelineError>?
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("missing.png")), placeholder: NamedSizes.image(3),
                    failureImage: NamedSizes.image(7), registry: registry, pipeline: pipeline, completed: { result = $0 })
                #expect(await waitUntil { result != nil })
                #expect(target.kinds() == ["placeholder", "failure", "failed"])
                #expect(target.widths("failure") == [7])
                #expect(target.errors == [.loadingFailed(.badStatusCode(404))])
                if case .failure(.loadingFailed(.badStatusCode(404))) = result {} else { Issue.record("result: \(String(describing: result))") }

                let delayed = RecordingTarget()
                var done = false
                delayed.setImage(
                    with: ImageRequest(url: origin.imageURL("missing2.png")), placeholder: NamedSizes.image(3), options: .delayPlaceholder,
                    registry: registry, pipeline: pipeline, completed: { _ in done = true })
                #expect(delayed.entries.isEmpty, "a delayed placeholder is not shown while loading")
                #expect(await waitUntil { done })
                #expect(delayed.kinds() == ["placeholder", "failed"])
                #expect(delayed.widths("placeholder") == [3])
            }
        }

        @Test func avoidAutoSetImageAndTransition() async throws {
            try await withOriginOnMainActor(files: try Self.files()) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let registry = ImageOperationRegistry()
                let target = RecordingTarget()
                var handed: Image?
                target.setImage(
                    with: ImageRequest(url: origin.imageURL("w10.png")), options: .avoidAutoSetImage, registry: registry, pipeline: pipeline,
                    completed: { handed = try? $0.get().image })
                #expect(await waitUntil { handed != nil })
                #expect(target.widths("final").isEmpty, "the completion decides")

                var transitions: [Int] = []
                let transition = ImageTransition { target, image, key in
                    transitions.append(image.pixelWidth)
                    target.display(image, as: .final, forKey: key)
                }
                let view = RecordingTarget()
                view.setImage(with: ImageRequest(url: origin.imageURL("w20.png")), transition: transition, registry: registry, pipeline: pipeline)
                #expect(await waitUntil { view.widths("final") == [20] })
                #expect(transitions == [20])
                // A memory hit is displayed without the transition, unless forced.
                view.setImage(with: ImageRequest(url: origin.imageURL("w20.png")), transition: transition, registry: registry, pipeline: pipeline)
                #expect(transitions == [20] && view.widths("final") == [20, 20])
                view.setImage(
                    with: ImageRequest(url: origin.imageURL("w20.png")), options: .forceTransition, transition: transition,
                    registry: registry, pipeline: pipeline)
                #expect(transitions == [20, 20])
            }
        }

        @Test func aNilRequestShowsThePlaceholderAndFails() async throws {
            let target = RecordingTarget()
            var result: Result<ImageResponse, ImagePipelineError>?
            let task = target.setImage(with: nil, placeholder: NamedSizes.image(3), registry: ImageOperationRegistry(), completed: { result = $0 })
            #expect(task == nil)
            #expect(target.kinds() == ["placeholder", "failed"])
            if case .failure(.loadingFailed(.invalidURL)) = result {} else { Issue.record("result: \(String(describing: result))") }
        }
    }
}

/// Blocks the calling (main) thread — without suspending, so nothing else runs on the main
/// actor meanwhile — until `flag` is set or `timeout` seconds pass.
func holdMainThread(until flag: Flag, timeout: Double) {
    let deadline = Date().addingTimeInterval(timeout)
    while !flag.isSet, Date() < deadline { usleep(5_000) }
}

/// A flag set from any thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}
