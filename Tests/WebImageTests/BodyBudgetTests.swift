import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Encoded bytes in the memory budget (issue #25): a body's declared length is reserved before
/// its first byte is read, a body of unknown length as it grows, and bytes read from the disk
/// cache while they are held; bodies wait for one another at a quarter of the budget and never
/// hold decodes up.
@Suite("Bodies in the memory budget")
struct BodyBudgetTests {
    /// A PNG of noise, so that its size is its pixels' (`side`² × 4 bytes and a little).
    static func noisePNG(side: Int) throws -> Data {
        var generator = SystemRandomNumberGenerator()
        let pixels = (0..<side * side * 4).map { index in index % 4 == 3 ? 255 : UInt8.random(in: 0...255, using: &generator) }
        return try ImageCoderRegistry.default.encode(
            Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: pixels, isOpaque: true), as: .png, quality: 1)
    }

    static func pipeline(
        _ budget: MemoryBudget, wait: Duration = .seconds(60), lease: Duration = .seconds(60), dataCache: (any DataCaching)? = nil
    ) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration(memoryCache: nil, dataCache: dataCache)
        configuration.memoryBudget = budget
        configuration.memoryBudgetWait = wait
        configuration.memoryBudgetBodyLease = lease
        return ImagePipeline(configuration: configuration)
    }

    @Test func encodedBytesWaitForOneAnotherAtAQuarterOfTheBudgetWithoutHoldingPixelsUp() async throws {
        let budget = MemoryBudget(limit: 1000)
        #expect(budget.encodedLimit == 250)
        let first = try await budget.reserve(200, waitingAtMost: .zero, for: .encoded)
        let second = Task { try await budget.reserve(100, waitingAtMost: .seconds(60), for: .encoded) }
        #expect(await eventually { budget.waitingCount == 1 })
        // Pixels do not queue behind a body parked at the encoded bound.
        let pixels = try await budget.reserve(700, waitingAtMost: .zero)
        #expect(budget.inUse == 900 && budget.encodedInUse == 200)
        first.release()
        let admitted = try await second.value
        #expect(admitted.use == .encoded && budget.encodedInUse == 100 && budget.inUse == 800)
        admitted.release()
        pixels.release()
        // One body alone may pass the bound, up to the whole budget; the next waits, then is refused.
        let alone = try await budget.reserve(600, waitingAtMost: .zero, for: .encoded)
        #expect(budget.encodedInUse == 600)
        await #expect(throws: MemoryBudgetError.overBudget(requested: 10, limit: 1000)) {
            try await budget.reserve(10, waitingAtMost: .milliseconds(100), for: .encoded)
        }
        alone.release()
        #expect(budget.inUse == 0 && budget.encodedInUse == 0 && budget.waitingCount == 0)
    }

    @Test func aWaiterThatGivesUpLetsThoseBehindItIn() async throws {
        let budget = MemoryBudget(limit: 1000)
        let held = try await budget.reserve(600, waitingAtMost: .zero)
        // The head gives up by a cancel, not by its time running out: a time-out could come before
        // the second waiter has joined the line on a loaded machine (CI), and then nothing is tested.
        let big = Task { try await budget.reserve(900, waitingAtMost: .seconds(60)) }
        #expect(await eventually { budget.waitingCount == 1 })
        let small = Task { try await budget.reserve(300, waitingAtMost: .seconds(60)) }
        #expect(await eventually { budget.waitingCount == 2 })
        big.cancel()
        await #expect(throws: MemoryBudgetError.cancelled) { try await big.value.bytes }
        // Admitted when the head of the line gave up, while `held` is still held.
        let granted = try await small.value
        #expect(granted.bytes == 300 && budget.inUse == 900)
        held.release()
    }

    @Test func aDeclaredBodyIsReservedBeforeItIsReadAndHeldWithTheResponse() async throws {
        let png = try Self.noisePNG(side: 200)
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 10 * png.count)
            let pipeline = Self.pipeline(budget)
            let held = try await budget.reserve(budget.limit - png.count / 2, waitingAtMost: .zero)
            // (The task returns the bytes only: a task keeps its result, and the response holds the reservation.)
            let load = Task { try await pipeline.data(for: ImageRequest(url: origin.imageURL("noise.png"))).data }
            // The response head has come: the body waits for room before a byte of it is read.
            #expect(await eventually { budget.waitingCount == 1 })
            #expect(budget.encodedInUse == png.count, "the declared length counts while it waits")
            held.release()
            #expect(try await load.value == png)
            #expect(await eventually { budget.inUse == 0 }, "\(budget.inUse) bytes still held after the response was dropped")
        }
    }

    @Test func aBodyWithNoRoomInTimeIsRefusedAndNotRememberedAsAFailedURL() async throws {
        let png = try Self.noisePNG(side: 100)
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 4 * png.count)
            let pipeline = Self.pipeline(budget, wait: .milliseconds(200))
            let url = origin.imageURL("noise.png")
            let held = try await budget.reserve(budget.limit, waitingAtMost: .zero)
            await #expect(throws: ImagePipelineError.overBudget(.overBudget(requested: png.count, limit: budget.limit))) {
                try await pipeline.image(for: url)
            }
            held.release()
            // (Waited for: a load's bytes leave the budget when its last references go, which
            // may be just after the caller has its answer.)
            #expect(await eventually { budget.inUse == 0 })
            let image = try await pipeline.image(for: url).image
            #expect(image.pixelWidth == 100, "the URL was not remembered as failed")
        }
    }

    @Test func aBodyOfUnknownLengthIsReservedAsItGrowsAndRefusedPastTheBudget() async throws {
        let png = try Self.noisePNG(side: 350)
        try #require(png.count > 300_000)
        try await withOrigin(files: ["noise.png": png]) { origin in
            let url = origin.imageURL("noise.png", query: "chunk=16384&length=0")
            let budget = MemoryBudget(limit: 16 << 20)
            var response: ImageDataResponse? = try await Self.pipeline(budget).data(for: ImageRequest(url: url))
            #expect(response?.data == png)
            // Reserved in steps, 256 KB then doubling: at least the body, less than twice it.
            #expect(budget.encodedInUse >= png.count && budget.encodedInUse < 2 * png.count, "\(budget.encodedInUse) for \(png.count)")
            response = nil
            #expect(await eventually { budget.inUse == 0 })
            // A budget smaller than the body: refused while it streams, with nothing left reserved.
            let small = MemoryBudget(limit: png.count / 2)
            let error = await #expect(throws: ImagePipelineError.self) {
                try await Self.pipeline(small).data(for: ImageRequest(url: url))
            }
            guard case .overBudget(.overBudget(_, let limit)) = error else {
                Issue.record("expected overBudget, got \(String(describing: error))")
                return
            }
            #expect(limit == png.count / 2)
            #expect(await eventually { small.inUse == 0 })
        }
    }

    @Test func bytesReadFromTheDiskCacheCountWhileTheyAreHeld() async throws {
        let png = try Self.noisePNG(side: 100)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 64 << 20)
            let pipeline = Self.pipeline(budget, dataCache: try DiskCache(directory: directory))
            let request = ImageRequest(url: origin.imageURL("noise.png")).options(.waitStoreCache)
            _ = try await pipeline.data(for: request)
            #expect(await eventually { budget.inUse == 0 })
            var cached: ImageDataResponse? = try await pipeline.data(for: request)
            #expect(cached?.source == .disk)
            #expect(budget.encodedInUse == png.count)
            cached = nil
            #expect(await eventually { budget.inUse == 0 })
        }
    }

    @Test func aSlowBodyHoldsOnlyWhatItSentOnceItsLeaseEnds() async throws {
        let slowPNG = try Self.noisePNG(side: 1000), png = try Self.noisePNG(side: 400)
        try await withOrigin(files: ["slow.png": slowPNG, "noise.png": png]) { origin in
            // Bodies' share: 2 MB. The slow source declares 4 MB, then sends 4 KB a second.
            let budget = MemoryBudget(limit: 8 << 20)
            let pipeline = Self.pipeline(budget, lease: .milliseconds(300))
            let slow = Task { try await pipeline.data(for: ImageRequest(url: origin.imageURL("slow.png", query: "chunk=4096&stall=1000"))).data.count }
            defer { slow.cancel() }
            // At most one growth step (256 KB): under load the lease can end before the first
            // chunk, and that chunk then takes a whole step (seen once beside a fuzzer).
            #expect(await eventually { budget.encodedInUse > 0 && budget.encodedInUse <= 256 << 10 },
                    "\(budget.encodedInUse) bytes still held for a body that sent a few KB")
            // Another body (640 KB) has room at once, while the slow one still trickles.
            let other = try await pipeline.data(for: ImageRequest(url: origin.imageURL("noise.png"))).data
            #expect(other == png)
            slow.cancel()
            _ = try? await slow.value
            // (What it sent may stay as bytes kept to resume it, counted as a cache's, not a body's.)
            #expect(await eventually { budget.encodedInUse == 0 })
        }
    }

    @Test func aBodyOutlastingItsLeaseGrowsInStepsAndCompletes() async throws {
        let png = try Self.noisePNG(side: 500)
        try await withOrigin(files: ["noise.png": png]) { origin in
            let budget = MemoryBudget(limit: 64 << 20)
            // About 1 MB in 64 KB pieces 100 ms apart: 1.6 s, past a 300 ms lease.
            let url = origin.imageURL("noise.png", query: "chunk=65536&stall=100")
            var response: ImageDataResponse? = try await Self.pipeline(budget, lease: .milliseconds(300)).data(for: ImageRequest(url: url))
            #expect(response?.data == png)
            #expect(budget.encodedInUse >= png.count && budget.encodedInUse < 2 * png.count, "\(budget.encodedInUse) for \(png.count)")
            response = nil
            #expect(await eventually { budget.inUse == 0 })
        }
    }
}
