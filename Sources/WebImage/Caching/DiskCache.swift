public import Foundation
internal import Crypto
internal import Logging

/// A directory of encoded images, one file per key, bounded by size and age.
///
/// - Files are named by the SHA-256 of the key (plus the key's extension), so any key is safe.
/// - Writes go to a temporary file in the same volume and are renamed into place: a reader sees
///   the old file or the whole new one, never a half-written one, even after a crash.
/// - The cache keeps an index of sizes and last-use dates, built by one scan on first use and
///   kept current afterwards, so the size limit is enforced on every store without rescanning.
///
/// ```swift
/// let disk = try DiskCache(directory: URL(fileURLWithPath: "/tmp/images"))
/// try await disk.store(data, for: "https://example.com/a.jpg")
/// let bytes = await disk.data(for: "https://example.com/a.jpg")
/// ```
public actor DiskCache: DataCaching {
    public struct Configuration: Sendable {
        /// Total bytes kept; a store that exceeds it evicts least recently used files down to
        /// ``trimRatio`` of it. Default 500 MB.
        public var sizeLimit: Int
        /// Entries unused for longer are dropped. Default 7 days (SDWebImage's default).
        public var maxAge: Duration
        /// Fraction of the limit that trimming leaves. Default 0.8.
        public var trimRatio: Double

        public init(sizeLimit: Int = 500 << 20, maxAge: Duration = .seconds(7 * 24 * 3600), trimRatio: Double = 0.8) {
            self.sizeLimit = sizeLimit
            self.maxAge = maxAge
            self.trimRatio = trimRatio
        }
    }

    /// Size and count of what the cache holds.
    public struct Statistics: Sendable, Equatable, Codable {
        public var count: Int
        public var totalSize: Int

        public init(count: Int, totalSize: Int) {
            self.count = count
            self.totalSize = totalSize
        }
    }

    private struct Entry {
        var size: Int
        var lastUsed: Date
    }

    public nonisolated let directory: URL
    public nonisolated let configuration: Configuration
    private let temporaryDirectory: URL
    private var index: [String: Entry]?
    private var totalSize = 0
    private let logger = Logger(label: "webimage.disk-cache")

    /// Opens (creating if needed) a cache in `directory`.
    /// - Throws: ``DiskCacheError/cannotCreateDirectory(path:reason:)``.
    public init(directory: URL, configuration: Configuration = .init()) throws {
        self.directory = directory
        self.configuration = configuration
        temporaryDirectory = directory.appendingPathComponent(".incoming", isDirectory: true)
        try Self.createDirectories(directory, temporaryDirectory)
    }

    /// The file name used for `key`.
    public nonisolated static func fileName(for key: String) -> String {
        let digest = SHA256.hash(data: Data(key.utf8)).map { String(format: "%02x", $0) }.joined()
        let ext = (URL(string: key)?.pathExtension ?? "").lowercased()
        let safe = !ext.isEmpty && ext.count <= 5 && ext.allSatisfy { $0.isLetter || $0.isNumber }
        return safe ? "\(digest).\(ext)" : digest
    }

    public func entry(for key: String) -> DataCacheEntry? {
        let name = Self.fileName(for: key)
        loadIndexIfNeeded()
        guard let entry = index?[name] else { return nil }
        let url = directory.appendingPathComponent(name)
        if Date().timeIntervalSince(entry.lastUsed) > configuration.maxAge.seconds {
            removeFile(name)
            return nil
        }
        guard let data = try? Data(contentsOf: url), !data.isEmpty else {
            removeFile(name)  // vanished or unreadable: forget it
            return nil
        }
        let now = Date()
        index?[name]?.lastUsed = now
        try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: url.path)
        return DataCacheEntry(data: data, metadata: CacheMetadata(byteCount: data.count, storedAt: entry.lastUsed, lastAccess: now))
    }

    public func updateMetadata(_ metadata: CacheMetadata, for key: String) {}

    public func store(_ data: Data, metadata: CacheMetadata, for key: String) throws {
        guard !data.isEmpty else { return }
        let name = Self.fileName(for: key)
        loadIndexIfNeeded()
        let temporary = temporaryDirectory.appendingPathComponent(UUID().uuidString)
        do {
            try Self.createDirectories(directory, temporaryDirectory)
            try data.write(to: temporary)
            if rename(temporary.path, directory.appendingPathComponent(name).path) != 0 {
                throw DiskCacheError.writeFailed(path: name, reason: String(cString: strerror(errno)))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            let failure = error as? DiskCacheError ?? .writeFailed(path: name, reason: "\(error)")
            logger.warning("disk cache store failed", metadata: ["key": "\(key)", "error": "\(failure)"])
            throw failure
        }
        if let old = index?[name] { totalSize -= old.size }
        index?[name] = Entry(size: data.count, lastUsed: Date())
        totalSize += data.count
        if totalSize > configuration.sizeLimit { trim(toSize: Int(Double(configuration.sizeLimit) * configuration.trimRatio)) }
    }

    public func remove(key: String) {
        loadIndexIfNeeded()
        removeFile(Self.fileName(for: key))
    }

    public func removeAll() throws {
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in contents {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        try Self.createDirectories(directory, temporaryDirectory)
        index = [:]
        totalSize = 0
    }

    public func statistics() -> Statistics {
        loadIndexIfNeeded()
        return Statistics(count: index?.count ?? 0, totalSize: totalSize)
    }

    /// Drops expired entries, then least recently used ones until the total is at most `size`.
    public func trim(toSize size: Int) {
        loadIndexIfNeeded()
        let now = Date()
        for (name, entry) in index ?? [:] where now.timeIntervalSince(entry.lastUsed) > configuration.maxAge.seconds {
            removeFile(name)
        }
        guard totalSize > size, let entries = index else { return }
        for (name, _) in entries.sorted(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            guard totalSize > size else { break }
            removeFile(name)
        }
    }

    // MARK: - Internals

    private func removeFile(_ name: String) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        if let entry = index?.removeValue(forKey: name) { totalSize -= entry.size }
    }

    /// One directory scan per process; afterwards the index is kept current by this actor.
    private func loadIndexIfNeeded() {
        guard index == nil else { return }
        var entries: [String: Entry] = [:]
        var total = 0
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey, .isRegularFileKey]
        let files = (try? FileManager.default.contentsOfDirectory(
            at: directory, includingPropertiesForKeys: keys, options: [.skipsHiddenFiles])) ?? []
        for file in files {
            guard let values = try? file.resourceValues(forKeys: Set(keys)), values.isRegularFile == true else { continue }
            let size = values.fileSize ?? 0
            entries[file.lastPathComponent] = Entry(size: size, lastUsed: values.contentModificationDate ?? .distantPast)
            total += size
        }
        // Leftovers of writes interrupted by a crash are never valid entries.
        if let stale = try? FileManager.default.contentsOfDirectory(atPath: temporaryDirectory.path) {
            for name in stale { try? FileManager.default.removeItem(at: temporaryDirectory.appendingPathComponent(name)) }
        }
        index = entries
        totalSize = total
    }

    private static func createDirectories(_ urls: URL...) throws(DiskCacheError) {
        for url in urls {
            do {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            } catch {
                throw .cannotCreateDirectory(path: url.path, reason: "\(error.localizedDescription)")
            }
        }
    }
}

/// Why the disk cache could not do what was asked.
public enum DiskCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    case cannotCreateDirectory(path: String, reason: String)
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case let .cannotCreateDirectory(path, reason): "cannot create cache directory \(path): \(reason)"
        case let .writeFailed(path, reason): "cannot write cache file \(path): \(reason)"
        }
    }
}
