import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("webimage fetch: processing, verification and cache flags")
struct FetchOptionsCLITests {
    struct Summary: Decodable {
        var requested, succeeded, failed, fromMemory, fromDisk, fromNetwork, revalidated, bytes: Int
    }

    func fetch(_ arguments: [String]) async throws -> (CommandResult, Summary?) {
        let result = try await WebImageCommand.run(["fetch"] + arguments + ["--json"])
        return (result, try? JSONDecoder().decode(Summary.self, from: Data(result.stdout.utf8)))
    }

    @Test func processSpecRunsInThePipelineAndBadSpecsExit64() async throws {
        try await withOrigin { origin in
            let output = temporaryDirectory(), cache = temporaryDirectory()
            let url = origin.imageURL("photo.jpg").absoluteString
            let (result, summary) = try await fetch([url, "--output", output.path, "--cache-dir", cache.path,
                                                     "--process", "resize:200x100:fill,grayscale,round:12", "--format", "png"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(summary?.succeeded == 1)
            let written = try ImageCoderRegistry.default.decode(Data(contentsOf: output.appendingPathComponent("photo.png")))
            #expect(written.pixelWidth == 200 && written.pixelHeight == 100)
            #expect(written.pixel(x: 0, y: 0).a == 0)  // the rounded corner is transparent
            let centre = written.pixel(x: 100, y: 50)
            #expect(centre.r == centre.g && centre.g == centre.b)  // grey

            for bad in ["resize:0x10", "emboss:3", "rotate:abc", "round:12,resize:"] {
                let (refused, _) = try await fetch([url, "--output", output.path, "--cache-dir", cache.path, "--process", bad])
                #expect(refused.status == 64, "\(bad): \(refused.status)")
                #expect(refused.stderr.contains("--process"), "\(bad): \(refused.stderr)")
            }
        }
    }

    /// An animation asked as a still (`--format png`) is one frame, enlarged as one: 1700 × 1700
    /// is allowed, though 20 such frames would pass the pixel limit and are refused when the
    /// output stays animated (`--format gif`).
    @Test func anAnimationWrittenAsAStillIsCheckedAsOneFrame() async throws {
        try await withOrigin(files: ["frames.gif": GIFBomb.manyFrames(width: 100, height: 100, frames: 20)]) { origin in
            let output = temporaryDirectory()
            let url = origin.imageURL("frames.gif").absoluteString
            let (still, summary) = try await fetch([url, "--output", output.path, "--no-cache",
                                                    "--process", "resize:1700x1700:exact:upscale", "--format", "png"])
            #expect(still.status == 0 && summary?.succeeded == 1, "\(still.stderr)")
            let written = try ImageCoderRegistry.default.readHeader(Data(contentsOf: output.appendingPathComponent("frames.png")))
            #expect(written.pixelWidth == 1700 && written.pixelHeight == 1700 && written.frameCount == 1)
            let (animated, _) = try await fetch([url, "--output", temporaryDirectory().path, "--no-cache",
                                                 "--process", "resize:1700x1700:exact:upscale", "--format", "gif"])
            #expect(animated.status == 3 && (animated.stdout + animated.stderr).contains("over the limit"), "\(animated.stdout) \(animated.stderr)")
        }
    }

    @Test func withoutVerifyOnlyTheHeaderIsReadWithVerifyUndecodableImagesFail() async throws {
        // A PNG whose header is whole but whose image data fails its CRC.
        var damaged = SampleFiles.standard["logo.png"]!
        damaged[damaged.count / 2] ^= 0xFF
        #expect(throws: ImageDecodingError.self) { _ = try ImageCoderRegistry.default.decode(damaged) }
        try await withOrigin(files: ["damaged.png": damaged]) { origin in
            let url = origin.imageURL("damaged.png").absoluteString
            let (plain, summary) = try await fetch([url, "--output", temporaryDirectory().path, "--cache-dir", temporaryDirectory().path])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(summary?.succeeded == 1)
            let (verified, checked) = try await fetch([url, "--verify", "--output", temporaryDirectory().path, "--cache-dir", temporaryDirectory().path])
            #expect(verified.status == 3)
            #expect(checked?.failed == 1)
        }
    }

    @Test func bytesRefusedByVerifyLeaveTheCacheAndPartialImagesAreRefused() async throws {
        // A JPEG cut short: its header is whole and a lenient decode gives the top rows (partial).
        let photo = try #require(SampleFiles.standard["photo.jpg"])
        let cut = photo.prefix(photo.count * 3 / 5)
        #expect(try ImageCoderRegistry.default.decode(cut).isPartial)
        var damaged = try #require(SampleFiles.standard["logo.png"])
        damaged[damaged.count / 2] ^= 0xFF
        let small = try #require(SampleFiles.standard["small.jpg"])
        try await withOrigin(files: ["cut.jpg": Data(cut), "damaged.png": damaged, "small.jpg": small]) { origin in
            for name in ["cut.jpg", "damaged.png"] {
                let cache = temporaryDirectory(), output = temporaryDirectory()
                let url = origin.imageURL(name).absoluteString
                let (verified, checked) = try await fetch([url, "--verify", "--output", output.path, "--cache-dir", cache.path])
                #expect(verified.status == 3, "\(name): \(verified.stdout)")
                #expect(checked?.failed == 1)
                #expect(!FileManager.default.fileExists(atPath: output.appendingPathComponent(name).path))
                // Nothing was left in the cache for a later run to write as a success.
                let (later, fromCache) = try await fetch([url, "--cache-only", "--output", output.path, "--cache-dir", cache.path])
                #expect(later.status == 3, "\(name): \(later.stdout)")
                #expect(fromCache?.succeeded == 0 && fromCache?.fromDisk == 0)
                #expect(!FileManager.default.fileExists(atPath: output.appendingPathComponent(name).path))
            }
            // A verified image stays cached.
            let cache = temporaryDirectory()
            let good = origin.imageURL("small.jpg").absoluteString
            let (verified, _) = try await fetch([good, "--verify", "--output", temporaryDirectory().path, "--cache-dir", cache.path])
            #expect(verified.status == 0, "\(verified.stdout)")
            let (cached, fromCache) = try await fetch([good, "--cache-only", "--output", temporaryDirectory().path, "--cache-dir", cache.path])
            #expect(cached.status == 0 && fromCache?.fromDisk == 1)
        }
    }

    @Test func cacheOnlyReloadAndNoCache() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            let url = origin.imageURL("small.jpg").absoluteString
            let base = [url, "--output", temporaryDirectory().path, "--cache-dir", cache.path]
            let (missing, _) = try await fetch(base + ["--cache-only"])
            #expect(missing.status == 3)
            #expect(origin.totalRequests == 0)
            _ = try await fetch(base)
            let (cached, fromCache) = try await fetch(base + ["--cache-only"])
            #expect(cached.status == 0 && fromCache?.fromDisk == 1)
            let (reloaded, fromNetwork) = try await fetch(base + ["--reload"])
            #expect(reloaded.status == 0 && fromNetwork?.fromNetwork == 1)
            #expect(origin.contentRequests.count == 2, "robots.txt aside (asked once a run)")
            let empty = temporaryDirectory()
            let (uncached, _) = try await fetch([url, "--output", temporaryDirectory().path, "--cache-dir", empty.path, "--no-cache"])
            #expect(uncached.status == 0)
            #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).filter { !$0.hasPrefix(".") }.isEmpty)
            let (conflict, _) = try await fetch(base + ["--reload", "--cache-only"])
            #expect(conflict.status == 64)
        }
    }

    @Test func refreshRevalidatesAndTheSummaryCountsIt() async throws {
        try await withOrigin { origin in
            let cache = temporaryDirectory()
            let urls = ["small.jpg", "logo.png"].map { origin.url("/cache/\($0)?cc=max-age%3D3600").absoluteString }
            let base = urls + ["--output", temporaryDirectory().path, "--cache-dir", cache.path]
            _ = try await fetch(base)
            let (warm, fromDisk) = try await fetch(base)
            #expect(warm.status == 0 && fromDisk?.fromDisk == 2 && fromDisk?.revalidated == 0)
            let (refreshed, summary) = try await fetch(base + ["--refresh"])
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(summary?.revalidated == 2 && summary?.fromDisk == 0 && summary?.fromNetwork == 0)
            let conditional = origin.requests.filter { $0.path.hasPrefix("/cache/") }
            #expect(conditional.count == 4)
            #expect(conditional.suffix(2).allSatisfy { $0.status == 304 && $0.headers["if-none-match"] != nil })
        }
    }
}
