import Foundation
import GRDB
import Testing
import WebImage
import WebImageOrigin

/// Damage done from outside (disk errors, people, other programs) is detected, never served.
@Suite("Disk cache: damaged files and index")
struct DiskCacheDamageTests {
    let key = "https://a.com/photo.jpg"
    let bytes = CacheSamples.bytes(for: "photo", version: 3)

    /// A cache holding `bytes` under `key`, and the path of that entry's file.
    func filled() throws -> (DiskCache, URL, String) {
        let directory = temporaryDirectory()
        let cache = try DiskCache(directory: directory, configuration: .init(orphanGracePeriod: .zero))
        try cache.store(bytes, for: key)
        let file = try indexQueue(directory).read { db in
            try String.fetchOne(db, sql: "SELECT file FROM entry WHERE key = ?", arguments: [key])
        }
        return (cache, directory, directory.appendingPathComponent("files/\(try #require(file))").path)
    }

    func indexQueue(_ directory: URL) throws -> DatabaseQueue {
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path, configuration: configuration)
    }

    /// `damage` the file; the next read is a miss, the entry and its file are gone, the damage
    /// counted — whether the damage comes before the first read or after a hit (when the cache
    /// remembers the entry's row and reads no index).
    func expectDetected(_ damage: (String) throws -> Void) throws {
        for afterAHit in [false, true] {
            try expectDetected(afterAHit: afterAHit, damage)
        }
    }

    private func expectDetected(afterAHit: Bool, _ damage: (String) throws -> Void) throws {
        let (cache, _, path) = try filled()
        if afterAHit { #expect(cache.entry(for: key)?.data == bytes) }
        try damage(path)
        #expect(cache.entry(for: key) == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        let stats = try cache.statistics()
        #expect(stats.count == 0 && stats.totalSize == 0 && stats.damaged == 1)
        try cache.store(bytes, for: key)  // re-stored as after a new download
        #expect(cache.entry(for: key)?.data == bytes)
    }

    @Test func truncatedFile() throws {
        try expectDetected { path in try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path)) }
    }

    @Test func flippedBit() throws {
        try expectDetected { path in
            var damaged = bytes
            damaged[damaged.count / 2] ^= 0x10
            try damaged.write(to: URL(fileURLWithPath: path))
        }
    }

    @Test func zeroFilledFile() throws {
        try expectDetected { path in try Data(count: bytes.count).write(to: URL(fileURLWithPath: path)) }
    }

    @Test func longerFile() throws {
        try expectDetected { path in try (bytes + Data([0])).write(to: URL(fileURLWithPath: path)) }
    }

    /// Sizes no file has, written into the index by something else: the entry is a miss (never a
    /// read of that many bytes), and the totals and evictions that sum them never trap.
    @Test(arguments: [Int64.max, Int64.min, -1, Int64(1) << 40])
    func rowWithASizeNoFileHas(_ size: Int64) throws {
        let (cache, directory, _) = try filled()
        let index = try indexQueue(directory)
        try index.write { try $0.execute(sql: "UPDATE entry SET size = ? WHERE key = ?", arguments: [size, key]) }
        try index.close()
        // A store first: past the size limit (the huge sizes), it evicts, summing this row's size.
        try cache.store(bytes, for: "other")
        #expect(cache.entry(for: "other")?.data == bytes)
        let reopened = try DiskCache(directory: directory, configuration: .init(orphanGracePeriod: .zero))
        #expect(reopened.entry(for: key) == nil)
        try reopened.store(bytes, for: "third")
        #expect(reopened.entry(for: "third")?.data == bytes)
    }

    /// A damaged row sized near 2⁶³, used last: the eviction it sets off drops that row, not the
    /// good entries used before it (it once evicted every one of them on its way to the row).
    @Test(arguments: [Int64.max, Int64(1) << 62, Int64(1) << 40])
    func aHugeDamagedRowEvictsNoGoodEntry(_ size: Int64) throws {
        let (cache, directory, _) = try filled()
        let others = (0..<10).map { "k\($0)" }
        for other in others { try cache.store(CacheSamples.bytes(for: other), for: other) }
        try indexQueue(directory).write {
            try $0.execute(sql: "UPDATE entry SET size = ?, lastAccess = lastAccess + 1000 WHERE key = ?", arguments: [size, key])
        }
        try cache.store(bytes, for: "other")
        for other in others { #expect(cache.entry(for: other)?.data == CacheSamples.bytes(for: other), "\(other) was evicted") }
        #expect(cache.entry(for: key) == nil)
        let stats = try cache.statistics()
        let stored = others.map { CacheSamples.bytes(for: $0).count }.reduce(bytes.count, +)
        #expect(stats.count == 11 && stats.totalSize == stored && stats.evictions == 0, "\(stats)")
    }

    /// A damaged row sized far below zero once made the total negative, so nothing was evicted
    /// again and the cache grew without bound.
    @Test func aHugelyNegativeRowDoesNotStopEviction() throws {
        let directory = temporaryDirectory()
        let limit = bytes.count * 8
        let cache = try DiskCache(directory: directory, configuration: .init(sizeLimit: limit, orphanGracePeriod: .zero))
        try cache.store(bytes, for: key)
        try indexQueue(directory).write { try $0.execute(sql: "UPDATE entry SET size = ? WHERE key = ?", arguments: [Int64.min + 1, key]) }
        for i in 0..<40 { try cache.store(bytes, for: "k\(i)") }
        let stats = try cache.statistics()
        #expect(stats.totalSize <= limit && stats.count <= 8 && stats.evictions > 0, "\(stats)")
    }

    /// Values of the wrong type where a size, a file name or a counter belongs (SQLite lets any
    /// writer put them there): a miss, statistics that read, stores that work; never a trap.
    @Test(arguments: ["size = 'many'", "size = 1e30", "size = -1e30", "file = 42", "checksum = 'x'", "lastAccess = 'yesterday'"])
    func wrongTypesInARowAreAMissNotATrap(_ damage: String) throws {
        let (cache, directory, _) = try filled()
        let queue = try indexQueue(directory)
        try queue.write {
            try $0.execute(sql: "UPDATE entry SET \(damage) WHERE key = ?", arguments: [key])
            try $0.execute(sql: "UPDATE counter SET value = 1e300 WHERE name = 'hits'")
            try $0.execute(sql: "INSERT INTO reservation VALUES (x'00ff', 42, 'lots', 'then', 'never')")
        }
        try queue.close()
        let reopened = try DiskCache(directory: directory, configuration: .init(orphanGracePeriod: .zero))
        #expect(reopened.entry(for: key) == nil)
        _ = try reopened.statistics()
        for i in 0..<3 { try reopened.store(bytes, for: "k\(i)") }
        #expect(reopened.entry(for: "k2")?.data == bytes)
        _ = try reopened.trim(toSize: 0)
        _ = try reopened.verify()
    }

    @Test func rowWithoutFile() throws {
        try expectDetected { path in try FileManager.default.removeItem(atPath: path) }
    }

    @Test func fileWithoutRowIsAMissAndIsSweptLater() throws {
        let (cache, directory, path) = try filled()
        try indexQueue(directory).write { db in try db.execute(sql: "DELETE FROM entry") }
        #expect(cache.entry(for: key) == nil)
        #expect(FileManager.default.fileExists(atPath: path))  // an orphan until a sweep
        #expect(try cache.trim().orphansRemoved == 1)
        #expect(!FileManager.default.fileExists(atPath: path))
        try cache.store(bytes, for: key)
        #expect(cache.entry(for: key)?.data == bytes)
    }

    @Test func verifyFindsEveryDamagedEntry() throws {
        let (cache, _, path) = try filled()
        for i in 0..<5 { try cache.store(CacheSamples.bytes(for: "k\(i)"), for: "k\(i)") }
        try Data(count: 10).write(to: URL(fileURLWithPath: path))
        let report = try cache.verify()
        #expect(report.checked == 6 && report.damaged == [key] && report.missing.isEmpty)
        #expect(try cache.statistics().count == 5)
        #expect(try cache.verify().damaged.isEmpty)
    }

    @Test func aDamagedIndexIsSetAsideAndTheCacheStartsEmpty() throws {
        let directory = try filled().1  // the cache itself is closed again here
        let index = directory.appendingPathComponent("index.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: index.path + suffix) }
        try Data(repeating: 0x5A, count: 8192).write(to: index)
        let reopened = try DiskCache(directory: directory)
        #expect(reopened.entry(for: key) == nil)
        try reopened.store(bytes, for: key)
        #expect(reopened.entry(for: key)?.data == bytes)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".damaged-") }
        #expect(!aside.isEmpty)
    }
}
