import Foundation
import GRDB
import Testing
import WebImage

/// The disk cache deletes only what it made (found by a red-team run, stop 49): `cache clear`
/// and `cache verify` deleted every file of another folder through a `files/` that was a
/// symbolic link, every file of a folder given as `--cache-dir` by mistake, and a file with a
/// 64-hex-digit name at its top level; an index row naming `../../x` could read or delete a file
/// outside the cache.
@Suite("The disk cache deletes only the files it made")
struct CacheForeignFilesTests {
    /// A folder of three precious files, two days old (older than any grace period).
    static func precious(in directory: URL) throws -> URL {
        let folder = directory.appendingPathComponent("precious")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for i in 1...3 {
            let file = folder.appendingPathComponent("photo\(i).jpg")
            try Data("precious \(i)".utf8).write(to: file)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -172_800)], ofItemAtPath: file.path)
        }
        return folder
    }

    static func count(_ folder: URL) -> Int { (try? FileManager.default.contentsOfDirectory(atPath: folder.path).count) ?? -1 }

    @Test func aSymlinkedFilesFolderIsRefusedAndItsTargetKept() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = try Self.precious(in: directory)
        let cache = directory.appendingPathComponent("cache")
        // A real cache first, then its files/ swapped for a link to the precious folder.
        try await DiskCache(directory: cache).store(Data([1, 2, 3]), for: "k")
        try FileManager.default.removeItem(at: cache.appendingPathComponent("files"))
        try FileManager.default.createSymbolicLink(atPath: cache.appendingPathComponent("files").path, withDestinationPath: "../precious")
        for command in ["clear", "verify", "trim"] {
            let result = try await WebImageCommand.run(["cache", command, "--cache-dir", cache.path])
            #expect(result.status != 0 && result.stderr.contains("symbolic link"), "\(command): \(result.stdout) \(result.stderr)")
            #expect(Self.count(victim) == 3, "\(command) deleted through the link")
        }
        #expect(throws: DiskCacheError.self) { _ = try DiskCache(directory: cache) }
    }

    @Test func aFolderThatIsNoCacheIsLeftAlone() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A mistyped --cache-dir: somebody's folder with a files/ of its own, and a file named
        // like the pre-index cache format (64 hex digits).
        let files = try Self.precious(in: directory)
        try FileManager.default.moveItem(at: files, to: directory.appendingPathComponent("files"))
        let hexName = directory.appendingPathComponent(String(repeating: "a", count: 64) + ".jpg")
        try Data("keep".utf8).write(to: hexName)
        for command in ["clear", "verify", "trim"] {
            let result = try await WebImageCommand.run(["cache", command, "--cache-dir", directory.path])
            #expect(result.status != 0 && result.stderr.contains("no disk cache"), "\(command): \(result.stderr)")
        }
        #expect(Self.count(directory.appendingPathComponent("files")) == 3 && FileManager.default.fileExists(atPath: hexName.path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("index.sqlite").path), "no cache was started in it")
    }

    @Test func aRealCacheKeepsFilesItDidNotMake() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = try DiskCache(directory: directory, configuration: .init(orphanGracePeriod: .zero))
        try await cache.store(Data([1, 2, 3]), for: "k")
        let files = directory.appendingPathComponent("files")
        let foreign = files.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: foreign)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -172_800)], ofItemAtPath: foreign.path)
        let hexName = directory.appendingPathComponent(String(repeating: "b", count: 64))
        try Data("keep".utf8).write(to: hexName)
        #expect(try cache.verify().orphansRemoved == 0)
        let clear = try await WebImageCommand.run(["cache", "clear", "--cache-dir", directory.path])
        #expect(clear.status == 0 && clear.stdout.contains("removed 1 images"), "\(clear.stdout) \(clear.stderr)")
        #expect(FileManager.default.fileExists(atPath: foreign.path) && FileManager.default.fileExists(atPath: hexName.path))
        #expect(Self.count(files) == 1, "the entry's own file is gone")
    }

    /// A row whose file is a path out of the cache is dropped as damage: the file it names is
    /// neither read (served as the entry) nor deleted.
    @Test func aRowNamingAPathOutsideIsNeitherReadNorDeleted() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let victim = try Self.precious(in: directory)
        let root = directory.appendingPathComponent("cache")
        let cache = try DiskCache(directory: root)
        let secret = Data("precious 1".utf8)
        for key in ["read", "verified"] { try cache.store(secret, for: key) }
        let queue = try DiskCacheDamageTests().indexQueue(root)
        try queue.write { db in
            // Same size and checksum as the victim's bytes, so only the name can refuse it.
            try db.execute(sql: "UPDATE entry SET file = '../../precious/photo1.jpg'")
        }
        try queue.close()
        let reopened = try DiskCache(directory: root)
        #expect(reopened.entry(for: "read") == nil)
        let report = try reopened.verify()
        #expect(report.damaged == ["verified"], "\(report)")
        #expect(Self.count(victim) == 3)
    }
}
