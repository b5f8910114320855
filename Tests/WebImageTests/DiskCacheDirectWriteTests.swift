import Foundation
import Testing
@testable import WebImage

/// Large entries are written past the page cache (`O_DIRECT`): the bytes, the file's length and
/// the cache's accounting are exactly those of a buffered write (issue 27, what the cache costs
/// a bulk run of large originals).
@Suite("Disk cache: direct writes of large entries")
struct DiskCacheDirectWriteTests {
    /// Bytes that differ at every offset of a block, so a padding or offset slip shows.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) ^ seed })
    }

    /// The file is opened with `O_DIRECT` (its `/proc` flags say so), cut back to the length
    /// from the padded blocks, and reads back byte for byte.
    @Test(arguments: [1, 4095, 4096, 4097, 1 << 20, 3_000_007, DirectWrite.chunkSize, 2 * DirectWrite.chunkSize + 4097])
    func theDescriptorIsDirectAndTheFileExact(count: Int) throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("entry").path
        let data = Self.bytes(count, seed: 0x5A)
        let result = try #require(data.withUnsafeBytes { DirectWrite.write($0, to: path) }, "this file system does direct I/O")
        let descriptor = try result.get()
        let flags = try String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("flags:") }.flatMap { Int($0.dropFirst(6).trimmingCharacters(in: .whitespaces), radix: 8) }
        close(descriptor)
        #expect(flags.map { Int32($0) & (DirectWrite.openFlag ?? 0) } == DirectWrite.openFlag, "flags \(String(describing: flags))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == data)
    }

    /// A second write to the same name is refused (`O_EXCL`, as the buffered write) with the
    /// errno, and the first file is left as it was.
    @Test func anExistingFileIsNeitherReplacedNorRemoved() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("entry").path
        let first = Self.bytes(5000, seed: 1)
        close(try #require(first.withUnsafeBytes { DirectWrite.write($0, to: path) }).get())
        let second = Self.bytes(9000, seed: 2).withUnsafeBytes { DirectWrite.write($0, to: path) }
        guard case .failure(let failure) = second else { Issue.record("expected EEXIST, got \(String(describing: second))"); return }
        #expect(failure.errno == EEXIST)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == first)
    }

    /// Through the cache, on both sides of the 1 MiB default: each entry reads back whole, its
    /// file is as long as the entry (no padding counted), and the statistics add up.
    @Test func entriesAroundTheThresholdRoundTrip() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory)
        #expect(cache.configuration.directWriteMinimumSize == 1 << 20)
        let sizes = [(1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3_000_007]
        for (index, size) in sizes.enumerated() {
            try cache.store(Self.bytes(size, seed: UInt8(index)), for: "k\(index)")
        }
        for (index, size) in sizes.enumerated() {
            #expect(cache.data(for: "k\(index)") == Self.bytes(size, seed: UInt8(index)), "\(size) bytes")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: cache.files.files.path)
        let lengths = try files.map { try FileManager.default.attributesOfItem(atPath: cache.files.files.path + "/" + $0)[.size] as? Int }
        #expect(lengths.compactMap { $0 }.sorted() == sizes.sorted())
        #expect(try cache.statistics().totalSize == sizes.reduce(0, +))
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache.files.incoming.path).isEmpty, "no temporary file left")
    }

    /// Off (`nil`), the same entries are written the usual way and read back alike.
    @Test func offWritesEveryEntryBuffered() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory, configuration: .init(directWriteMinimumSize: nil))
        let data = Self.bytes(3_000_007, seed: 9)
        try cache.store(data, for: "big")
        #expect(cache.data(for: "big") == data)
    }
}
