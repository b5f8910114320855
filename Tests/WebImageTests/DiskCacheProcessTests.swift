import Foundation
import Testing
import WebImage
import WebImageOrigin

/// Real processes against one cache directory: killed mid-write, writing at once, and the size
/// limit watched while they run.
@Suite("Disk cache: crashes, several processes, size limit", .serialized)
struct DiskCacheProcessTests {
    /// Starts `webimage cache fill …` (stores `CacheSamples` entries) without waiting for it.
    func startFill(_ directory: URL, count: Int, prefix: String = "k", version: Int, extra: [String] = []) throws -> TestProcess {
        let process = TestProcess()
        process.executableURL = WebImageCommand.executable
        process.arguments = ["cache", "fill", "--cache-dir", directory.path, "--count", "\(count)", "--prefix", prefix,
                             "--version", "\(version)"] + extra
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Every entry the cache serves is byte-exact: the bytes of the version it says it is, one
    /// of `versions`. Returns how many keys were served. (The comparison runs off the
    /// cooperative pool: hundreds of entries of up to 64 KB are a lot of work for a debug build.)
    func expectByteExact(_ directory: URL, keys: [String], versions: ClosedRange<Int>) async throws -> Int {
        let (served, problems) = try await offPool { () throws -> (Int, [String]) in
            let cache = try DiskCache(directory: directory)
            var served = 0, problems: [String] = []
            for key in keys {
                guard let entry = cache.entry(for: key) else { continue }
                guard let version = CacheSamples.version(of: entry.data), versions.contains(version) else {
                    problems.append("\(key): no version of \(versions) in its first bytes")
                    continue
                }
                if entry.data != CacheSamples.bytes(for: key, version: version) { problems.append("\(key) is not byte-exact") }
                served += 1
            }
            return (served, problems)
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        return served
    }

    @Test func killedWritersLeaveOnlyByteExactEntries() async throws {
        let directory = temporaryDirectory()
        let keys = (0..<400).map { "k\($0)" }
        var generator = SystemRandomNumberGenerator()
        var servedTotal = 0, killedMidRun = 0
        for round in 1...20 {
            let process = try startFill(directory, count: keys.count, version: round)
            try await Task.sleep(for: .milliseconds(Int.random(in: 30...300, using: &generator)))
            kill(process.processIdentifier, SIGKILL)
            await offPool { process.waitUntilExit() }
            if process.endedBySignal { killedMidRun += 1 }
            servedTotal += try await expectByteExact(directory, keys: keys, versions: 1...round)
        }
        #expect(killedMidRun >= 15, "most rounds must be killed while storing, not after")
        #expect(servedTotal > 0, "no round stored anything before being killed")
        let report = try DiskCache(directory: directory).verify()
        #expect(report.damaged.isEmpty && report.missing.isEmpty)
    }

    @Test func twoProcessesWritingTheSameKeysBothSucceed() async throws {
        let directory = temporaryDirectory()
        // No index yet: both processes race to create it (WAL mode, schema) as well.
        let keys = (0..<200).map { "k\($0)" }
        let first = try startFill(directory, count: keys.count, version: 1)
        let second = try startFill(directory, count: keys.count, version: 2)
        await offPool { first.waitUntilExit(); second.waitUntilExit() }
        #expect(first.terminationStatus == 0 && second.terminationStatus == 0)
        #expect(try await expectByteExact(directory, keys: keys, versions: 1...2) == keys.count)
        let cache = try DiskCache(directory: directory, configuration: .init(orphanGracePeriod: .zero))
        #expect(try cache.statistics().count == keys.count)
        let report = try cache.verify()
        #expect(report.checked == keys.count && report.damaged.isEmpty && report.orphansRemoved == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("files").path)
        #expect(files.count == keys.count)  // every replaced version's file was removed
    }

    @Test func tenThousandInsertsNeverPassTheLimitByMoreThanOneEntry() async throws {
        let limit = 200_000, largest = 4096
        let directory = temporaryDirectory()
        let (peakIndex, peakFiles) = try await offPool { try fillAndWatch(directory, limit: limit, largest: largest) }
        #expect(peakIndex <= limit)
        #expect(peakFiles <= limit + largest)
        #expect(peakIndex > limit / 2)  // the limit was reached, not avoided
    }

    /// Stores 10,000 entries of up to `largest` bytes under `limit` and returns the largest
    /// total the index and the files folder showed meanwhile.
    func fillAndWatch(_ directory: URL, limit: Int, largest: Int) throws -> (index: Int, files: Int) {
        let cache = try DiskCache(directory: directory, configuration: .init(sizeLimit: limit, synchronousWrites: false))
        var generator = SystemRandomNumberGenerator()
        var peakIndex = 0, peakFiles = 0
        for i in 0..<10_000 {
            let size = Int.random(in: 256...largest, using: &generator)
            try cache.store(Data(repeating: UInt8(truncatingIfNeeded: i), count: size), for: "k\(i % 3000)")
            if i % 10 == 0 {
                peakIndex = max(peakIndex, try cache.statistics().totalSize)
                peakFiles = max(peakFiles, directoryBytes(directory.appendingPathComponent("files")))
            }
        }
        return (peakIndex, peakFiles)
    }

    @Test func aChildProcessFillingUnderALimitIsWatchedFromOutside() async throws {
        let directory = temporaryDirectory()
        let observer = try DiskCache(directory: directory)
        let limit = 300_000, largest = 64 * 1024
        let child = try startFill(directory, count: 1500, version: 1, extra: ["--cache-size-mb", "0.3", "--no-fsync"])
        var peakIndex = 0, peakFiles = 0, samples = 0
        while child.isRunning {
            peakIndex = max(peakIndex, try observer.statistics().totalSize)
            // The listing is not atomic: a file evicted after being listed and a new one listed
            // later may both be counted, hence room for a second entry here.
            peakFiles = max(peakFiles, directoryBytes(directory.appendingPathComponent("files")))
            samples += 1
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(child.terminationStatus == 0)
        #expect(samples > 10)
        #expect(peakIndex <= limit)
        #expect(peakFiles <= limit + 2 * largest)
        #expect(try observer.statistics().totalSize <= limit)
    }

    func directoryBytes(_ folder: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.reduce(0) { total, name in
            let size = (try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)[.size]) as? Int
            return total + (size ?? 0)
        }
    }
}
