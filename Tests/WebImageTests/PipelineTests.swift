import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("Pipeline end to end against a real origin")
struct PipelineTests {
    /// The error every `image(for:)` caller may receive is one word: typed throws then hand it
    /// back in registers, and no waiting caller keeps a buffer for it in its task frames (at
    /// 33 bytes it pushed each of 10,000 waiting callers into a second allocator slab).
    @Test func pipelineErrorIsOneWordAndKeepsItsDetails() {
        #expect(MemoryLayout<ImagePipelineError>.size == MemoryLayout<Int>.size)
        let error = ImagePipelineError.loadingFailed(.badStatusCode(404))
        #expect(error == .loadingFailed(.badStatusCode(404)))
        #expect(error != .loadingFailed(.badStatusCode(410)))
        #expect(ImagePipelineError.cancelled.description == "cancelled")
    }

    @Test func firstLoadFromNetworkThenMemory() async throws {
        try await withOrigin { origin in
            let pipeline = try makePipeline(cacheDirectory: temporaryDirectory())
            let url = origin.imageURL("photo.jpg")

            let first = try await pipeline.image(for: url)
            #expect(first.source == .network)
            #expect(first.image.format == .jpeg)
            #expect(first.image.pixelWidth == 1000 && first.image.pixelHeight == 1000)
            #expect(first.image.pixels.count == 1000 * 1000 * 4)
            #expect(first.data == SampleFiles.standard["photo.jpg"])

            let second = try await pipeline.image(for: url)
            #expect(second.source == .memory)
            #expect(second.image.pixels == first.image.pixels)
            #expect(origin.requestCount(path: "/images/photo.jpg") == 1)
        }
    }

    @Test func newPipelineOverSameDirectoryLoadsFromDiskWithoutRequests() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.imageURL("logo.png")
            let network = try await makePipeline(cacheDirectory: directory).image(for: ImageRequest(url: url, options: .waitStoreCache))
            #expect(network.source == .network)
            let before = origin.totalRequests

            let fresh = try makePipeline(cacheDirectory: directory)
            let disk = try await fresh.image(for: url)
            #expect(disk.source == .disk)
            #expect(origin.totalRequests == before)
            #expect(disk.image.pixels == network.image.pixels)
            #expect(disk.image.format == .png && !disk.image.isOpaque)
            #expect(try await fresh.image(for: url).source == .memory)
        }
    }

    @Test func corruptBodyIsTypedErrorAndNothingIsCached() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache()
            let pipeline = try makePipeline(cacheDirectory: directory, memory: memory)
            let bad = origin.imageURL("photo.jpg", query: "corrupt=1")
            await #expect {
                _ = try await pipeline.image(for: bad)
            } throws: { error in
                guard case .decodingFailed(.unsupportedFormat)? = error as? ImagePipelineError else { return false }
                return true
            }
            #expect(memory.count == 0)
            #expect(await DiskCache.statistics(of: directory).count == 0)
            #expect(pipeline.cachedImage(for: bad) == nil)

            let good = try await pipeline.image(for: origin.imageURL("photo.jpg"))
            #expect(good.source == .network)
        }
    }

    @Test func truncatedJPEGIsTypedErrorAndNothingIsCached() async throws {
        let full = SampleFiles.standard["photo.jpg"]!
        try await withOrigin(files: ["cut.jpg": full.prefix(full.count / 2)]) { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache()
            let pipeline = try makePipeline(cacheDirectory: directory, memory: memory)
            await #expect {
                _ = try await pipeline.image(for: origin.imageURL("cut.jpg"))
            } throws: { error in
                guard case .decodingFailed(.corrupt(format: .jpeg, _))? = error as? ImagePipelineError else { return false }
                return true
            }
            #expect(memory.count == 0)
            #expect(await DiskCache.statistics(of: directory).count == 0)
        }
    }

    @Test func notFoundIsTypedErrorAndNextRequestWorks() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let memory = MemoryCache()
            let pipeline = try makePipeline(cacheDirectory: directory, memory: memory)
            await #expect(throws: ImagePipelineError.self) {
                _ = try await pipeline.image(for: origin.imageURL("missing.jpg"))
            }
            do {
                _ = try await pipeline.image(for: origin.imageURL("missing.jpg"))
                Issue.record("expected an error")
            } catch let error as ImagePipelineError {
                guard case .loadingFailed(.badStatusCode(404)) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(error.description == "bad HTTP status 404")
            }
            #expect(memory.count == 0)
            #expect(await DiskCache.statistics(of: directory).count == 0)
            #expect(try await pipeline.image(for: origin.imageURL("small.jpg")).source == .network)
        }
    }

    @Test func bodyCutMidwayIsTransportErrorAndNothingIsCached() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let pipeline = try makePipeline(cacheDirectory: directory)
            do {
                _ = try await pipeline.image(for: origin.imageURL("photo.jpg", query: "truncate=1000"))
                Issue.record("expected an error")
            } catch let error as ImagePipelineError {
                guard case .loadingFailed(let reason) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(reason.isTransient)
            }
            #expect(await DiskCache.statistics(of: directory).count == 0)
            #expect(try await pipeline.image(for: origin.imageURL("photo.jpg")).source == .network)
        }
    }

    @Test func scaleFactorComesFromTheFileName() async throws {
        try await withOrigin { origin in
            let pipeline = try makePipeline(cacheDirectory: temporaryDirectory())
            let response = try await pipeline.image(for: origin.imageURL("icon@2x.png"))
            #expect(response.image.scale == 2)
            #expect(response.image.size.width == 32)
        }
    }

    @Test func damagedDiskEntryIsReplacedFromNetwork() async throws {
        try await withOrigin { origin in
            let directory = temporaryDirectory()
            let url = origin.imageURL("small.jpg")
            _ = try await makePipeline(cacheDirectory: directory).image(for: ImageRequest(url: url, options: .waitStoreCache))
            let files = directory.appendingPathComponent("files")
            let name = try #require(try FileManager.default.contentsOfDirectory(atPath: files.path).first)
            try Data("garbage".utf8).write(to: files.appendingPathComponent(name))

            let request = ImageRequest(url: url, options: .waitStoreCache)
            let response = try await makePipeline(cacheDirectory: directory).image(for: request)
            #expect(response.source == .network)  // the damaged bytes were not served
            #expect(origin.requestCount(path: "/images/small.jpg") == 2)
            #expect(try await DiskCache(directory: directory).data(for: request.dataKey) == SampleFiles.standard["small.jpg"])
            #expect(try await makePipeline(cacheDirectory: directory).image(for: url).source == .disk)  // stored again
        }
    }
}

extension DiskCache {
    /// Statistics of the cache in `directory`, read by a new instance.
    static func statistics(of directory: URL) async -> Statistics {
        try! DiskCache(directory: directory).statistics()
    }
}
