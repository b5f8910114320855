public import Foundation

extension DiskCache {
    /// Which date the age limit counts from (SDWebImage's `diskCacheExpireType`).
    public enum ExpireType: String, Sendable, Codable, CaseIterable {
        /// Entries unused for longer than `maxAge` are dropped (default).
        case accessDate
        /// Entries stored (or revalidated) longer than `maxAge` ago are dropped, used or not.
        case storedDate
    }

    /// Limits and durability of a disk cache.
    ///
    /// ```swift
    /// let cache = try DiskCache(directory: dir, configuration: .init(sizeLimit: 200 << 20, maxAge: .seconds(86_400)))
    /// ```
    public struct Configuration: Sendable, Equatable {
        /// Total bytes kept. A store that would pass it evicts least recently used entries first,
        /// down to ``trimRatio`` of it, in the same transaction. Default 500 MB.
        public var sizeLimit: Int
        /// Entries older than this (see ``expireType``) are misses and are removed. Default 7 days.
        public var maxAge: Duration
        /// Fraction of ``sizeLimit`` an eviction leaves, so every store does not evict. Default 0.8.
        public var trimRatio: Double
        /// What ``maxAge`` counts from. Default ``ExpireType/accessDate``.
        public var expireType: ExpireType
        /// `fsync` each file before it is renamed into place. Default off: every read checks the
        /// bytes' size and checksum, so a file that a power cut left empty, short or torn is a
        /// miss (and removed), never wrong bytes; a process crash loses nothing either way (the
        /// kernel keeps the written pages). On, a store costs a journal commit of the file system
        /// (milliseconds on a busy disk) and an entry survives a power cut as well.
        public var synchronousWrites: Bool
        /// Entries of this many bytes or more are written past the kernel's page cache
        /// (`O_DIRECT`, Linux, where the file system allows it; elsewhere as usual); nil writes
        /// every entry the usual way. Default 1 MiB: a bulk run's originals then cost the
        /// process no page-cache reclaim (a 3 MB photo's store took 1–7 ms of CPU buffered,
        /// about 1 ms direct, on a machine whose memory was full of cached files), and the first
        /// read of such an entry comes from the disk (later ones from the page cache, as usual).
        public var directWriteMinimumSize: Int?
        /// How long a write waits for another process holding the index's write lock. Default 10 s.
        public var busyTimeout: Duration
        /// Orphan files (written by a process that died before indexing them) are looked for at
        /// most this often, and only files older than ``orphanGracePeriod`` are removed.
        public var orphanSweepInterval: Duration
        /// A file younger than this may belong to another process's store in progress (a store is
        /// assumed to finish within it). It also times the room a killed process had reserved for
        /// its writes in progress: given back one period after another process finds it ended
        /// (or, when its process cannot be checked, after its reservation went unrenewed for two).
        /// Processes sharing a directory should use the same value.
        public var orphanGracePeriod: Duration

        public init(
            sizeLimit: Int = 500 << 20, maxAge: Duration = .seconds(7 * 24 * 3600), trimRatio: Double = 0.8,
            expireType: ExpireType = .accessDate, synchronousWrites: Bool = false, busyTimeout: Duration = .seconds(10),
            orphanSweepInterval: Duration = .seconds(3600), orphanGracePeriod: Duration = .seconds(120),
            directWriteMinimumSize: Int? = 1 << 20
        ) {
            self.sizeLimit = sizeLimit
            self.maxAge = maxAge
            self.trimRatio = trimRatio
            self.expireType = expireType
            self.synchronousWrites = synchronousWrites
            self.busyTimeout = busyTimeout
            self.orphanSweepInterval = orphanSweepInterval
            self.orphanGracePeriod = orphanGracePeriod
            self.directWriteMinimumSize = directWriteMinimumSize
        }
    }

    /// What the cache holds and how it has been used (hit counts summed over every process that
    /// used the directory).
    public struct Statistics: Sendable, Equatable, Codable {
        public var count: Int
        public var totalSize: Int
        /// The least recent access and the oldest store among the entries.
        public var oldestAccess: Date?
        public var oldestStored: Date?
        public var hits: Int
        public var misses: Int
        /// Entries found damaged (checksum, size or missing file) and removed.
        public var damaged: Int
        public var evictions: Int

        public init(
            count: Int, totalSize: Int, oldestAccess: Date? = nil, oldestStored: Date? = nil, hits: Int = 0, misses: Int = 0,
            damaged: Int = 0, evictions: Int = 0
        ) {
            self.count = count
            self.totalSize = totalSize
            self.oldestAccess = oldestAccess
            self.oldestStored = oldestStored
            self.hits = hits
            self.misses = misses
            self.damaged = damaged
            self.evictions = evictions
        }
    }

    /// What ``DiskCache/verify()`` found.
    public struct VerifyReport: Sendable, Equatable, Codable {
        /// Entries whose bytes were read and checked.
        public var checked: Int
        /// Keys of entries whose bytes did not match their checksum or size (removed).
        public var damaged: [String]
        /// Keys of entries whose file was gone (removed).
        public var missing: [String]
        /// Files no entry pointed to (removed).
        public var orphansRemoved: Int
    }
}
