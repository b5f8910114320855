import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Decodes in a worker process that a cancel kills (issue 25, "Deadlines stop the work"): for
/// AVIF, HEIF and JPEG XL, whose libraries cannot be stopped mid-decode. Real workers (the
/// `webimage decode-worker` executable), and small shell scripts standing for workers that hang,
/// crash or lie.
@Suite("Isolated decoding in a worker process", .serialized)
struct DecodeIsolationTests {
    static let worker = DecodeIsolation.Worker(executable: WebImageCommand.executable.path, arguments: ["decode-worker"])

    /// Every size goes to the worker. A spare is kept for the real worker only: a script's
    /// spare would write its pid file too.
    static func isolated(_ worker: DecodeIsolation.Worker = worker, minimum: Int = 0) -> ImageCoderRegistry {
        ImageCoderRegistry.default.isolatingDecodes(DecodeIsolation(worker: worker, minimumPixelCount: minimum, keepsSpareWorker: worker == Self.worker))
    }

    /// This process's children running `decode-worker` (the suite is serialized: they are its spares and decodes).
    static func workers() -> [pid_t] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.flatMap { task -> [pid_t] in
            let text = (try? String(contentsOfFile: "/proc/self/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }.filter { pid in
            let command = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            return String(decoding: command, as: UTF8.self).contains("decode-worker")
        }
    }

    @Test func aSpareWorkerWaitsForTheNextDecode() async throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48, seed: 2), as: .heic, quality: 0.9)
        let expected = try ImageCoderRegistry.default.decode(heic)
        Self.sameImage(try Self.isolated().decode(heic), expected)
        // One spare waits, using no CPU once started (it is started as the decode ends: its
        // command line names the worker once its exec is done).
        let spare = try #require(await Self.spare(other: nil))
        #expect(Self.workers() == [spare])
        // Once it has loaded the codec libraries (slow on a loaded machine), it waits: its CPU
        // time stops growing.
        var settled = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !settled, ContinuousClock.now < deadline {
            let before = ProcessUsage.cpuSeconds(spare) ?? 0
            try await Task.sleep(for: .milliseconds(300))
            settled = (ProcessUsage.cpuSeconds(spare) ?? 0) - before < 0.02
        }
        #expect(settled, "the spare kept using the CPU while it waited")
        // It asks the out-of-memory killer to choose it before this process.
        #expect((try? String(contentsOfFile: "/proc/\(spare)/oom_score_adj", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == "1000")
        // The next decode is the spare's: it ends with it, and another spare waits.
        Self.sameImage(try Self.isolated().decode(heic), expected)
        #expect(kill(spare, 0) == -1 && errno == ESRCH, "the spare \(spare) is still there")
        let next = try #require(await Self.spare(other: spare))
        // A spare that died while it waited is replaced; the decode does not fail.
        kill(next, SIGKILL)
        try await Task.sleep(for: .milliseconds(50))
        Self.sameImage(try Self.isolated().decode(heic), expected)
        #expect(kill(next, 0) == -1 && errno == ESRCH, "the dead spare \(next) was not reaped")
        #expect(await Self.spare(other: next) != nil)
    }

    /// The one worker child that is not `other`, once it has appeared (at most 20 s).
    static func spare(other: pid_t?) async -> pid_t? {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if let found = workers().first(where: { $0 != other }) { return found }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// A "worker" that runs `script` in `/bin/sh` (its standard input is the request).
    static func script(_ script: String) -> DecodeIsolation.Worker {
        DecodeIsolation.Worker(executable: "/bin/sh", arguments: ["-c", script])
    }

    static func sameImage(_ a: Image, _ b: Image) {
        #expect(a.format == b.format && a.pixelWidth == b.pixelWidth && a.pixelHeight == b.pixelHeight)
        #expect(a.bytesPerRow == b.bytesPerRow && a.isOpaque == b.isOpaque && a.orientation == b.orientation)
        #expect(a.frameCount == b.frameCount && a.loopCount == b.loopCount && a.repairs == b.repairs)
        #expect(a.colorProfile == b.colorProfile && a.sourceColorProfile == b.sourceColorProfile)
        #expect(a.pixels == b.pixels, "pixels differ")
        #expect(a.frames == b.frames, "frames or durations differ")
    }

    @Test func aWorkerDecodesWhatTheProcessDecodes() throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48, seed: 5, alpha: true), as: .heic, quality: 0.9)
        let sequence = try AVIFCoder().encode(AnimationTests.flatAnimation(), as: .avif, quality: 1)
        let files = [heic, sequence, try CodecFixtures.data("jxl-animated.jxl"), try CodecFixtures.data("jxl-alpha.jxl")]
        var thumbnail = ImageDecodingOptions(thumbnailMaxPixelSize: 20)
        thumbnail.colorHandling = .keep
        for data in files {
            for options in [ImageDecodingOptions.default, thumbnail, ImageDecodingOptions(firstFrameOnly: true)] {
                Self.sameImage(try Self.isolated().decode(data, options: options), try ImageCoderRegistry.default.decode(data, options: options))
            }
        }
        #expect(try Self.isolated().decode(sequence).frames.count == 3)
    }

    /// A decode that needs more memory than its worker may take (``WorkerMemory``) fails, typed,
    /// and promptly, at whatever point its decoder's allocation failed; the process goes on. A
    /// limit of half the default still decodes the largest fixtures (36 MP HEIC, 49 MP JPEG XL):
    /// the default's margin.
    @Test(.timeLimit(.minutes(2)))
    func aDecodeOverItsWorkersMemoryLimitFailsTyped() throws {
        func isolated(_ memory: WorkerMemory) -> ImageCoderRegistry {
            ImageCoderRegistry.default.isolatingDecodes(DecodeIsolation(worker: Self.worker, minimumPixelCount: 0, keepsSpareWorker: false, workerMemory: memory))
        }
        let picture = SampleImages.pattern(width: 2000, height: 1100, seed: 3)
        let files = [try HEIFCoder().encode(picture, as: .heic, quality: 0.8), try AVIFCoder().encode(picture, as: .avif, quality: 0.8),
                     try CodecFixtures.data("jxl-lossy.jxl")]
        for data in files {
            for tight in [WorkerMemory(baseBytes: 0, bytesPerPixel: 1), WorkerMemory(baseBytes: 0, bytesPerPixel: 4)] {
                let clock = ContinuousClock(), start = clock.now
                #expect(throws: ImageDecodingError.self, "\(tight)") { try isolated(tight).decode(data) }
                #expect(clock.now - start < TestTime.scaled(.seconds(10)), "took \(clock.now - start)")
            }
            #expect(try isolated(WorkerMemory()).decode(data).pixelWidth == ImageCoderRegistry.default.readHeader(data).pixelWidth)
        }
        let half = WorkerMemory(baseBytes: 128 << 20, bytesPerPixel: 8)
        for name in ["heic-slow-6000.heic", "jxl-solid-49mp-lossy.jxl"] {
            let data = try CodecFixtures.data(name)
            #expect(try isolated(half).decode(data, options: ImageDecodingOptions(maxPixelCount: 60_000_000)).pixelWidth > 5000, "\(name)")
        }
    }

    /// AVIF and HEIC encodes of 100,000 pixels or more run in the worker and write the same file
    /// as the process does (libaom and x265, one thread: deterministic); an animation's frames go
    /// along; smaller encodes and other formats stay in the process.
    @Test func anEncodeInTheWorkerWritesWhatTheProcessWrites() throws {
        let picture = SampleImages.pattern(width: 400, height: 300, seed: 7, alpha: true)
        for (format, quality) in [(ImageFormat.avif, 0.7), (.avif, 1.0), (.heic, 0.8)] {
            let isolated = try Self.isolated().encode(picture, as: format, quality: quality)
            #expect(isolated == (try ImageCoderRegistry.default.encode(picture, as: format, quality: quality)), "\(format) \(quality)")
        }
        let animation = try AVIFCoder().decode(try AVIFCoder().encode(AnimationTests.flatAnimation(), as: .avif, quality: 1), options: .default)
        #expect(animation.frames.count == 3)
        // Not isolated (too small, or PNG): a worker that cannot start is never asked.
        let unstartable = ImageCoderRegistry.default.isolatingDecodes(DecodeIsolation(worker: .init(executable: "/nonexistent/webimage", arguments: [])))
        #expect(try unstartable.encode(SampleImages.pattern(width: 300, height: 300), as: .avif, quality: 0.5).count > 0)
        #expect(try unstartable.encode(picture, as: .png, quality: 1).count > 0)
        #expect(throws: ImageEncodingError.self) { try unstartable.encode(picture, as: .avif, quality: 0.5) }
        let frames = try Self.isolated().encode(animation, as: .avif, quality: 1)
        #expect(try AVIFCoder().decode(frames, options: .default).frames.count == 3)
    }

    /// A cancel kills a worker in the middle of a long encode (a 3000 × 3000 lossless AVIF: seconds).
    @Test func aCancelStopsAnEncodeInTheWorker() async throws {
        let noise = NoiseImages.make(width: 3000, height: 3000)
        let coders = Self.isolated()
        let task = Task.detached { try coders.encode(noise, as: .avif, quality: 1) }
        try await Task.sleep(for: .milliseconds(700))
        let busy = Self.workers()
        let clock = ContinuousClock(), start = clock.now
        task.cancel()
        await #expect(throws: ImageEncodingError.cancelled) { try await task.value }
        #expect(clock.now - start < TestTime.scaled(.milliseconds(500)), "took \(clock.now - start)")
        #expect(!busy.isEmpty)
        // The encoding worker is gone (a new spare may have started since).
        #expect(await eventually { Self.workers().filter { busy.contains($0) }.isEmpty }, "\(busy) \(Self.workers())")
    }

    /// A worker killed from outside (what the out-of-memory killer does) costs the request, and
    /// nothing else: the bytes on disk stay, the URL is not remembered as failed, and the next
    /// request decodes them without the network.
    @Test func aKilledWorkerBlamesNeitherTheURLNorTheCachedBytes() async throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48, seed: 4), as: .heic, quality: 0.9)
        try await withOrigin(files: ["a.heic": heic, "b.heic": heic]) { origin in
            let directory = temporaryDirectory()
            let killing = Self.isolated(Self.script("cat > /dev/null; kill -9 $$"))
            func request(_ name: String, _ coders: ImageCoderRegistry?, _ options: ImageLoadingOptions = .waitStoreCache) -> ImageRequest {
                var request = ImageRequest(url: origin.imageURL(name), options: options)
                request.context.coders = coders
                return request
            }
            // From the network: the failure is typed and not remembered.
            let network = try makeTestPipeline(cacheDirectory: directory, memory: nil, failedURLTimeToLive: .seconds(600))
            await #expect(throws: ImagePipelineError.decodingFailed(.workerKilled(format: .heic))) { _ = try await network.image(for: request("a.heic", killing)) }
            #expect(network.failedURLs.error(for: request("a.heic", nil).dataKey) == nil)
            #expect(try await network.image(for: request("a.heic", nil)).image.pixelWidth == 64)
            // From the disk: the entry stays (a corrupt entry would be removed and fetched again).
            _ = try await network.image(for: request("b.heic", nil))
            let fromDisk = try makeTestPipeline(cacheDirectory: directory, memory: nil, failedURLTimeToLive: .seconds(600))
            await #expect(throws: ImagePipelineError.decodingFailed(.workerKilled(format: .heic))) { _ = try await fromDisk.image(for: request("b.heic", killing)) }
            let later = try makeTestPipeline(cacheDirectory: directory, memory: nil)
            let again = try await later.image(for: request("b.heic", nil, [.waitStoreCache, .fromCacheOnly]))
            #expect(again.source == .disk && again.image.pixelWidth == 64)
            #expect(origin.requestCount(path: "/images/b.heic") == 1)
            #expect(origin.requestCount(path: "/images/a.heic") == 2)
        }
    }

    @Test func aWorkersTypedErrorsArriveTyped() throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        // A cut file in strict mode: the worker's error is the one this process gives.
        var strict = ImageDecodingOptions(strict: true)
        strict.maxFrameCount = 1
        let truncated = heic.prefix(heic.count - 200)
        let here = #expect(throws: ImageDecodingError.self) { try ImageCoderRegistry.default.decode(truncated, options: strict) }
        let there = #expect(throws: ImageDecodingError.self) { try Self.isolated().decode(truncated, options: strict) }
        #expect(here == there)
    }

    @Test func aCancelKillsTheWorkerAtOnce() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-worker-\(UUID().uuidString).pid")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        // A worker that never answers: only the kill ends it.
        let coders = Self.isolated(Self.script("echo $$ > '\(pidFile.path)'; exec sleep 60"))
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        let executor = ImageWorkExecutor(threads: 1, name: "test-isolation")
        defer { executor.shutdown() }
        let decode = Task(executorPreference: executor) { () -> ImageDecodingError? in
            do throws(ImageDecodingError) { _ = try coders.decode(heic); return nil } catch { return error }
        }
        let pid = try await Self.waitForPID(in: pidFile)
        let clock = ContinuousClock(), cancelled = clock.now
        decode.cancel()
        #expect(await decode.value == .cancelled)
        let returned = clock.now - cancelled
        #expect(returned < TestTime.scaled(.milliseconds(500)), "returned \(returned) after the cancel")
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the worker \(pid) still exists")
    }

    @Test func aCancelStopsARealDecodeThatTakesASecond() async throws {
        let heic = try CodecFixtures.data("heic-slow-6000.heic")
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-worker-\(UUID().uuidString).pid")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let worker = Self.script("echo $$ > '\(pidFile.path)'; exec '\(WebImageCommand.executable.path)' decode-worker")
        let coders = Self.isolated(worker)
        let executor = ImageWorkExecutor(threads: 1, name: "test-isolation")
        defer { executor.shutdown() }
        let decode = Task(executorPreference: executor) { () -> ImageDecodingError? in
            do throws(ImageDecodingError) { _ = try coders.decode(heic); return nil } catch { return error }
        }
        let pid = try await Self.waitForPID(in: pidFile)
        // Cancelled once the worker is inside libheif (a tenth of a second of its CPU, of the
        // second or more the decode needs).
        let deadline = ContinuousClock.now + .seconds(30)
        while (ProcessUsage.cpuSeconds(pid) ?? 1) < 0.1, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let used = ProcessUsage.cpuSeconds(pid) ?? 0
        let clock = ContinuousClock(), cancelled = clock.now
        decode.cancel()
        // `.cancelled`, not an image: the worker was stopped inside libheif, which nothing else could do.
        #expect(await decode.value == .cancelled, "the decode ran to its end (the worker had used \(used) s at the cancel)")
        let returned = clock.now - cancelled
        #expect(returned < TestTime.scaled(.milliseconds(500)), "returned \(returned) after the cancel")
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "the worker \(pid) still exists")
    }

    @Test func aWorkerThatDiesOrIsMissingIsATypedError() throws {
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        // A SIGKILL from elsewhere (the out-of-memory killer's signal) is not the file's fault: `workerKilled`.
        let killed = #expect(throws: ImageDecodingError.self) { try Self.isolated(Self.script("cat > /dev/null; kill -9 $$")).decode(heic) }
        #expect(killed == .workerKilled(format: .heic), "\(String(describing: killed))")
        // A crash is the file's: `corrupt`, naming the signal.
        let crashed = #expect(throws: ImageDecodingError.self) { try Self.isolated(Self.script("cat > /dev/null; kill -11 $$")).decode(heic) }
        guard case .corrupt(.heic, let reason) = crashed else { Issue.record("\(String(describing: crashed))"); return }
        #expect(reason.contains("ended by signal 11"), "\(reason)")
        let exited = #expect(throws: ImageDecodingError.self) { try Self.isolated(Self.script("exit 3")).decode(heic) }
        #expect(exited?.description.contains("exited with status 3") == true, "\(String(describing: exited))")
        let missing = DecodeIsolation.Worker(executable: "/nonexistent/webimage", arguments: [])
        let absent = #expect(throws: ImageDecodingError.self) { try Self.isolated(missing).decode(heic) }
        guard case .libraryUnavailable(.heic, let reason) = absent else { Issue.record("\(String(describing: absent))"); return }
        #expect(reason.contains("/nonexistent/webimage"))
    }

    /// A reply is untrusted: a worker claiming a huge image is refused before anything is allocated
    /// for it, and one that stops halfway is an error, not a partial image.
    @Test(arguments: [
        (100_000, 100_000, 400_000, 2, 0, "outside the request's limits"),
        (10, 10, -40, 2, 0, "outside the request's limits"),
        (Int.max, 2, 0, 2, 0, "outside the request's limits"),
        (10, 10, 40, 2, 50, "ended before its reply"),
        (10, 10, 40, 1, 400, "version 1"),
        (10, 10, 40, 2, -1, "an unreadable description"),
    ])
    func aLyingWorkerIsRefused(width: Int, height: Int, rowBytes: Int, version: Int, pixelBytes: Int, expected: String) throws {
        let fields: [String: Any] = [
            "version": version, "format": "heic", "pixelWidth": width, "pixelHeight": height, "bytesPerRow": rowBytes,
            "isOpaque": true, "scale": 1, "orientation": 1, "frameCount": 1, "frames": [Any](), "loopCount": 0, "repairs": 0,
        ]
        let description = pixelBytes < 0 ? Data("not json".utf8) : try JSONSerialization.data(withJSONObject: fields)
        let reply = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-reply-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reply) }
        var length = UInt32(description.count).littleEndian
        try (Data(bytes: &length, count: 4) + description + Data(repeating: 9, count: max(pixelBytes, 0))).write(to: reply)
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        let error = #expect(throws: ImageDecodingError.self) { try Self.isolated(Self.script("cat '\(reply.path)'")).decode(heic) }
        #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
    }

    /// A worker that sends a whole reply and then does not exit is stopped: the decode returns its image.
    @Test func aWorkerThatLingersAfterItsReplyIsStopped() async throws {
        let fields: [String: Any] = [
            "version": 2, "format": "heic", "pixelWidth": 2, "pixelHeight": 1, "bytesPerRow": 8,
            "isOpaque": true, "scale": 1, "orientation": 1, "frameCount": 1, "frames": [Any](), "loopCount": 0, "repairs": 0,
        ]
        let description = try JSONSerialization.data(withJSONObject: fields)
        let reply = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-reply-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: reply) }
        var length = UInt32(description.count).littleEndian
        try (Data(bytes: &length, count: 4) + description + Data([1, 2, 3, 255, 4, 5, 6, 255])).write(to: reply)
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        let clock = ContinuousClock(), start = clock.now
        let image = try Self.isolated(Self.script("cat > /dev/null; cat '\(reply.path)'; exec sleep 60")).decode(heic)
        #expect(image.pixelWidth == 2 && image.pixels == [1, 2, 3, 255, 4, 5, 6, 255])
        #expect(clock.now - start < TestTime.scaled(.seconds(3)), "took \(clock.now - start)")
    }

    @Test func smallImagesLimitsAndOtherFormatsNeverStartAWorker() throws {
        // A worker that cannot start: any decode that reached it would fail.
        let coders = ImageCoderRegistry.default.isolatingDecodes(
            DecodeIsolation(worker: .init(executable: "/nonexistent/webimage", arguments: [])))
        let avif = try AVIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .avif, quality: 0.9)
        #expect(try coders.decode(avif).pixelWidth == 64)
        // HEIC goes to the worker at any size (its header can understate the frames), so here it fails.
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        #expect(throws: ImageDecodingError.self) { try coders.decode(heic) }
        let png = try PNGCoder().encode(SampleImages.pattern(width: 2000, height: 1100), as: .png, quality: 1)
        #expect(try coders.decode(png).pixelWidth == 2000)
        // Over the pixel limit, the header refuses the file first.
        let slow = try CodecFixtures.data("heic-slow-6000.heic")
        #expect(throws: ImageDecodingError.tooManyPixels(width: 6000, height: 6000, frames: 1, limit: 1_000_000)) {
            try coders.decode(slow, options: ImageDecodingOptions(maxPixelCount: 1_000_000))
        }
    }

    @Test func decodersInsertedByTheCallerStayInTheProcess() throws {
        struct Marked: ImageDecoding {
            func canDecode(_ format: ImageFormat) -> Bool { format == .heic }
            func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader { try HEIFCoder().readHeader(data) }
            func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
                var image = try HEIFCoder().decode(data, options: options)
                image.loopCount = 42
                return image
            }
        }
        var coders = ImageCoderRegistry.default
        coders.insert(Marked(), at: 0)
        let isolated = coders.isolatingDecodes(DecodeIsolation(worker: .init(executable: "/nonexistent/webimage", arguments: []), minimumPixelCount: 0))
        let heic = try HEIFCoder().encode(SampleImages.pattern(width: 64, height: 48), as: .heic, quality: 0.9)
        #expect(try isolated.decode(heic).loopCount == 42)
    }

    static func waitForPID(in file: URL) async throws -> pid_t {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: file, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return pid
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        throw CancellationError()
    }
}
