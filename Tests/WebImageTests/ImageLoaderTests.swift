import Foundation
import Observation
import Testing
@testable import WebImage
import WebImageOrigin

extension MainActorTests {
    @Suite("ImageLoader: an observable load")
    @MainActor
    struct ImageLoaderTests {
        /// Records which observed properties changed, re-registering after each change — what
        /// SwiftUI does.
        @MainActor
        final class Observer {
            private(set) var changes: [String] = []
            let loader: ImageLoader
            init(_ loader: ImageLoader) {
                self.loader = loader
                track()
            }

            private func track() {
                let snapshot = Snapshot(loader)
                withObservationTracking {
                    _ = (loader.image, loader.previews, loader.progress, loader.error, loader.isLoading)
                } onChange: { [weak self] in
                    // Called before the change; look at the new values on the next main-actor turn.
                    Task { @MainActor in self?.record(since: snapshot) }
                }
            }

            private func record(since old: Snapshot) {
                let new = Snapshot(loader)
                if old.isLoading != new.isLoading { changes.append("isLoading=\(new.isLoading)") }
                if old.previews != new.previews { changes.append("previews") }
                if old.hasProgress != new.hasProgress || (new.hasProgress && old.received != new.received) { changes.append("progress") }
                if old.imageWidth != new.imageWidth { changes.append("image=\(new.imageWidth.map(String.init) ?? "nil")") }
                if old.error != new.error { changes.append("error") }
                track()
            }

            struct Snapshot {
                var isLoading: Bool, previews: Int, hasProgress: Bool, received: Int, imageWidth: Int?, error: ImagePipelineError?
                @MainActor init(_ loader: ImageLoader) {
                    isLoading = loader.isLoading
                    previews = loader.previews.count
                    hasProgress = loader.progress != nil
                    received = loader.progress?.received ?? 0
                    imageWidth = loader.image?.pixelWidth
                    error = loader.error
                }
            }
        }

        @Test func changesAreObservedInOrder() async throws {
            try await withOriginOnMainActor(files: try NamedSizes.files([10])) { origin in
                let source = SampleImages.pattern(width: 320, height: 240, seed: 9)
                origin.setImage(try JPEGCoder(progressive: true).encode(source, as: .jpeg, quality: 0.9), named: "progressive.jpg")
                let loader = ImageLoader(pipeline: try makeTestPipeline(cacheDirectory: nil))
                let observer = Observer(loader)
                var request = ImageRequest(url: origin.imageURL("progressive.jpg", query: "chunk=2048&stall=40"), options: .progressiveLoad)
                request.context.previewInterval = .milliseconds(20)
                loader.load(request)
                #expect(loader.isLoading)
                #expect(await waitUntil { observer.changes.contains("image=320") && observer.changes.last == "isLoading=false" })
                let changes = observer.changes
                #expect(changes.first == "isLoading=true", "changes: \(changes)")
                let image = try #require(changes.firstIndex(of: "image=320"))
                #expect(changes.firstIndex(of: "progress").map { $0 < image } == true, "changes: \(changes)")
                #expect(changes.firstIndex(of: "previews").map { $0 < image } == true, "changes: \(changes)")
                #expect(loader.previews.allSatisfy { $0.pixelWidth == 320 })
                #expect(loader.error == nil && loader.response?.image.pixelWidth == 320)
            }
        }

        @Test func errorsAreObservedAndANewLoadReplacesTheOld() async throws {
            try await withOriginOnMainActor(files: try NamedSizes.files([10, 20])) { origin in
                let loader = ImageLoader(pipeline: try makeTestPipeline(cacheDirectory: nil))
                let observer = Observer(loader)
                loader.load(origin.imageURL("missing.png"))
                #expect(await waitUntil { observer.changes.contains("error") })
                #expect(loader.error == .loadingFailed(.badStatusCode(404)) && loader.image == nil && !loader.isLoading)
                // The old load is slow; the new one replaces it and the old image never lands.
                loader.load(origin.imageURL("w20.png", query: "delay=400"))
                #expect(loader.error == nil)
                loader.load(origin.imageURL("w10.png"))
                #expect(await waitUntil { loader.image?.pixelWidth == 10 })
                try await Task.sleep(for: .milliseconds(600))
                #expect(loader.image?.pixelWidth == 10)
                #expect(!observer.changes.contains("image=20"))
            }
        }

        @Test func cancelAndReleaseStopTheDownload() async throws {
            var files = try NamedSizes.files([10])
            files["slow.png"] = try SampleImages.png(width: 64, height: 64)
            try await withOriginOnMainActor(files: files) { origin in
                let pipeline = try makeTestPipeline(cacheDirectory: nil)
                let loader = ImageLoader(pipeline: pipeline)
                loader.priority = .low
                loader.load(origin.imageURL("slow.png", query: "chunk=256&stall=250"))
                #expect(loader.isLoading)
                // The body has begun (a cancel before the head would leave the origin no body to abort).
                #expect(await waitUntil { origin.bytesSent(path: "/images/slow.png") > 0 })
                loader.cancel()
                #expect(!loader.isLoading && loader.image == nil)
                #expect(await waitUntil { origin.abortedBodies(path: "/images/slow.png") == 1 })
                let sentBefore = origin.bytesSent(path: "/images/slow.png")

                // Released while loading: deinit cancels.
                var released: ImageLoader? = ImageLoader(pipeline: pipeline)
                released?.load(origin.imageURL("slow.png", query: "chunk=256&stall=250&v=2"))
                #expect(await waitUntil { origin.bytesSent(path: "/images/slow.png") > sentBefore })
                weak let weakLoader = released
                released = nil
                #expect(weakLoader == nil)
                #expect(await waitUntil { origin.abortedBodies(path: "/images/slow.png") == 2 })
            }
        }

        @Test func priorityReachesTheRunningTask() async throws {
            try await withOriginOnMainActor(files: try NamedSizes.files([10])) { origin in
                let loader = ImageLoader(pipeline: try makeTestPipeline(cacheDirectory: nil))
                loader.priority = .veryLow
                loader.load(origin.imageURL("w10.png", query: "delay=300"))
                let task = try #require(loader.task)
                #expect(task.priority == .veryLow)
                loader.priority = .veryHigh
                #expect(task.priority == .veryHigh)
                #expect(await waitUntil { loader.image != nil })
                // A memory hit is set during load itself.
                loader.load(origin.imageURL("w10.png", query: "delay=300"))
                #expect(loader.image?.pixelWidth == 10 && !loader.isLoading && loader.response?.source == .memory)
            }
        }
    }
}
