import Foundation
import GRDB
import Testing
@testable import WebImage
import WebImageOrigin

/// A new index is made without syncs (the WAL switch and GRDB's first write cost five
/// `fdatasync`s), yet every commit after it is as durable as before, and an index a crash left
/// half made is finished at the next open (issue 27: what the cache costs a bulk run).
@Suite("Disk cache: a new index")
struct DiskCacheNewIndexTests {
    let bytes = CacheSamples.bytes(for: "photo", version: 1)

    @Test func theWriterCommitsWithNormalSyncsOnceTheIndexIsMade() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory)
        try cache.store(bytes, for: "a")
        // The writer connection's settings, read through it (PRAGMAs are per connection).
        let (synchronous, journal) = try cache.index.pool.write { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous"), try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(synchronous == 1, "NORMAL (1) after the index is made, not OFF (0)")
        // Readers too: the last connection to close checkpoints, and that must sync.
        let readerSynchronous = try cache.index.pool.read { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        #expect(readerSynchronous == 1)
        #expect(journal == "wal")
        #expect(cache.data(for: "a") == bytes)
    }

    @Test func anExistingIndexOpensWithNormalSyncsFromTheStart() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try DiskCache(directory: directory).store(bytes, for: "a")
        let reopened = try DiskCache(directory: directory)
        let synchronous = try reopened.index.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        #expect(synchronous == 1)
        #expect(reopened.data(for: "a") == bytes)
    }

    @Test func anIndexLeftWithoutItsSchemaIsFinishedAtTheNextOpen() throws {
        // What a crash while the index was made leaves: a WAL database without the schema.
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("index.sqlite").path
        do {
            let bare = try DatabasePool(path: path)
            try bare.write { try $0.execute(sql: "CREATE TABLE unrelated (x INTEGER)") }
        }
        let cache = try DiskCache(directory: directory)
        try cache.store(bytes, for: "b")
        #expect(cache.data(for: "b") == bytes)
    }
}
