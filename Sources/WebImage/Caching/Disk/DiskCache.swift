public import Foundation
internal import Logging
internal import Metrics

/// Original image bytes on disk with their HTTP metadata, bounded by size and age, safe across
/// crashes and across processes sharing the directory.
///
/// - **Index**: `index.sqlite` (SQLite in WAL mode, opened on first use) maps each key to its file, size, checksum
///   and ``CacheMetadata``. Opening reads no directory listing; index and files are reconciled
///   lazily (a row whose file is gone is dropped when read; files no row names are swept at most
///   once per ``Configuration/orphanSweepInterval``, and by ``trim()`` and ``verify()``).
/// - **Writes**: bytes go to `.incoming/<uuid>` (`fsync`ed with ``Configuration/synchronousWrites``),
///   are renamed to `files/<key hash>-<random>`, and only then indexed, in one transaction that
///   also evicts: a crash leaves the old entry, the new one, or none — and at worst an orphan
///   file or a row whose file a power cut left short (a checksum miss), never wrong bytes.
/// - **Reads** check the bytes' size and checksum; a damaged entry is logged, removed and missed.
///   A key read lately takes its row from memory (`RecentRows`; a row names a file that never
///   changes, so a row replaced elsewhere shows as a missing file and is read again).
/// - **Footprint**: the folder's files — entries, index, WAL, `-shm`, temporary files — stay
///   within the size limit plus the larger of 1 MiB and 2 % of it (see `DiskFootprint`), also
///   with several processes writing at once: each open cache that writes reserves room for its
///   writes in progress in the index, every process counts every reservation, and that of a
///   killed process is given back after ``Configuration/orphanGracePeriod``.
/// - Access times and hit counts are written in batches (every 256 hits or 1 s, before any
///   eviction, on ``statistics()`` and ``flush()``).
///
/// ```swift
/// let disk = try DiskCache(directory: dir, configuration: .init(sizeLimit: 100 << 20, maxAge: .seconds(86_400)))
/// try disk.store(data, metadata: metadata, for: url.absoluteString)
/// if let entry = disk.entry(for: url.absoluteString), entry.metadata.isFresh(at: .now) { use(entry.data) }
/// disk.updateMetadata(refreshed, for: url.absoluteString)  // after a 304
/// ```
public final class DiskCache: DataCaching {
    public let directory: URL
    public let configuration: Configuration
    let files: CacheFiles
    let footprint: DiskFootprint
    /// This cache's row in the index's `reservation` table (random: one per instance).
    let owner = UUID().uuidString
    private let indexPath: String
    private let openedIndex = Locked<CacheIndex?>(nil)
    let logger = Logger(label: "webimage.disk-cache")
    let pending = Locked(PendingState())
    let metrics = DiskCacheMetrics()
    /// Rows of recent hits, so a repeated hit reads no index (see ``RecentRows``).
    let recentRows = RecentRows()

    struct PendingState {
        var usage = PendingUsage()
        var since: ContinuousClock.Instant?
        var lastSweepCheck: ContinuousClock.Instant?
        /// Bytes of this cache's writes between their temporary file and their index row.
        var inFlight = 0
        /// Bytes of this cache's reservation in the index, at least `inFlight` (0: none or lost).
        var reserved = 0
        /// When the reservation was last written (seconds since 1970; 0: never).
        var renewed = 0.0
    }

    /// Opens (creating if needed) the cache in `directory`.
    /// - Throws: ``DiskCacheError/cannotCreateDirectory(path:reason:)`` or
    ///   ``DiskCacheError/indexFailed(path:reason:)``.
    public init(directory: URL, configuration: Configuration = .init()) throws(DiskCacheError) {
        self.directory = directory
        self.configuration = configuration
        files = CacheFiles(root: directory)
        footprint = DiskFootprint(sizeLimit: configuration.sizeLimit)
        indexPath = directory.appendingPathComponent("index.sqlite").path
        try files.createDirectories(indexed: false)
    }

    /// The index, opened on first use: a cache that is never used (`fetch --no-cache`) leaves
    /// nothing but its folder behind.
    var index: CacheIndex {
        get throws(DiskCacheError) {
            try openedIndex.withLock { (opened: inout CacheIndex?) throws(DiskCacheError) -> CacheIndex in
                if let opened { return opened }
                let index = try CacheIndex(
                    path: indexPath, busyTimeout: configuration.busyTimeout, footprint: footprint,
                    logger: logger)
                opened = index
                return index
            }
        }
    }

    deinit {
        flush()
        releaseReservation()
    }

    /// The entry for `key` if its bytes are intact and it is within the age limit.
    public func entry(for key: String) -> DataCacheEntry? {
        lookup(key, now: Date(), mayRetry: true)
    }

    /// The size the index records for `key`, without reading its file or checking its age
    /// (``CachedByteCount/unknown`` when the index cannot be read). The row read is remembered,
    /// so the ``entry(for:)`` that follows does not query the index again.
    public func byteCount(for key: String) async -> CachedByteCount {
        if let row = recentRows[key] { return .bytes(row.size) }
        do {
            guard let row = try index.row(for: key) else { return .absent }
            recentRows.remember(row)
            return .bytes(row.size)
        } catch {
            return .unknown
        }
    }

    /// The row comes from ``recentRows`` when this process read it lately, else from the index.
    /// `mayRetry`: a missing file may mean another process replaced the entry between our index
    /// read and our file read (and removed the old file), or that a remembered row is out of
    /// date; then the index's row is read once more. A row the index no longer has is a miss,
    /// not damage.
    private func lookup(_ key: String, now: Date, mayRetry: Bool) -> DataCacheEntry? {
        var remembered = true
        var found = recentRows[key]
        if found == nil {
            remembered = false
            do { found = try index.row(for: key) } catch {
                logger.error("disk cache lookup failed", metadata: ["key": "\(key)", "error": "\(error)"])
                return miss()
            }
        }
        guard var row = found else { return miss() }
        if let touched = pending.withLock({ $0.usage.touches[key] }) {  // not yet written
            row.metadata.lastAccess = max(row.metadata.lastAccess, Date(timeIntervalSince1970: touched))
        }
        if isExpired(row.metadata, now: now) {
            // A remembered row may be older than the index's (other processes' hits, updates).
            if remembered {
                recentRows.forget(key)
                return lookup(key, now: now, mayRetry: mayRetry)
            }
            discard(row, reason: nil)
            return miss()
        }
        // A size past the cache's own limit (or negative) was never stored by a cache: a damaged
        // or foreign row, dropped without reading a file of that size.
        guard row.size >= 0, row.size <= configuration.sizeLimit else {
            discard(row, reason: "size \(row.size) outside the cache's limit of \(configuration.sizeLimit) bytes")
            return miss()
        }
        guard CacheFiles.isEntryName(row.file) else {
            // A damaged or foreign row naming a path (`../../etc/passwd`): neither read nor deleted.
            discard(row, reason: "\(row.file.debugDescription) is not a cache file name")
            return miss()
        }
        switch files.read(row.file, expectedSize: row.size) {
        case .missing:
            recentRows.forget(key)
            let current = remembered || mayRetry ? try? index.row(for: key) : row
            guard let current, current.file == row.file else {
                // Replaced or removed since the row was read (by another process, or a remembered
                // row this process evicted): the index's row now, once.
                return current != nil && mayRetry ? lookup(key, now: now, mayRetry: false) : miss()
            }
            discard(row, reason: "file missing")
            return miss()
        case .failed(let reason):
            logger.error("disk cache read failed", metadata: ["key": "\(key)", "file": "\(row.file)", "error": "\(reason)"])
            return miss()
        case .bytes(let data):
            guard data.count == row.size, data.withUnsafeBytes(ContentChecksum.of) == row.checksum else {
                let reason = data.count == row.size ? "checksum mismatch"
                    : data.count > row.size ? "longer than the \(row.size) bytes indexed" : "size \(data.count), expected \(row.size)"
                discard(row, reason: reason)
                return miss()
            }
            if !remembered { recentRows.remember(row) }
            var metadata = row.metadata
            metadata.lastAccess = now
            recordHit(key, at: now)
            return DataCacheEntry(data: data, metadata: metadata)
        }
    }

    /// Stores `data` under `key`, replacing any entry, and evicts what the limits require.
    /// Empty data is not stored.
    /// - Throws: ``DiskCacheError`` (logged too); the cache is unchanged then.
    public func store(_ data: Data, metadata: CacheMetadata, for key: String) throws(DiskCacheError) {
        guard !data.isEmpty else { return }
        guard data.count <= configuration.sizeLimit else {
            throw logged(.entryTooLarge(bytes: data.count, limit: configuration.sizeLimit), key: key)
        }
        let name = CacheFiles.newName(for: key)
        recentRows.forget(key)
        do { try reserveRoom(for: data.count) } catch { throw logged(error, key: key) }
        defer { pending.withLock { $0.inFlight -= data.count } }
        do { try files.write(data, name: name, sync: configuration.synchronousWrites, directFrom: configuration.directWriteMinimumSize) } catch { throw logged(error, key: key) }
        var metadata = metadata
        metadata.byteCount = data.count
        let row = IndexRow(key: key, file: name, size: data.count, checksum: data.withUnsafeBytes(ContentChecksum.of), metadata: metadata)
        let usage = takeUsage()
        let result: IndexChange
        do { result = try index.store(row, limits: limits(), usage: usage, reservation: reservationUpdate(storing: data.count)) } catch {
            files.remove(name)
            throw logged(error, key: key)
        }
        applied(result)
        sweepOrphansIfDue()
    }

    /// Stores `data` with no HTTP metadata (fresh until the cache's age limit).
    public func store(_ data: Data, for key: String) throws(DiskCacheError) {
        try store(data, metadata: CacheMetadata(byteCount: data.count), for: key)
    }

    /// The intact bytes for `key`, fresh or not.
    public func data(for key: String) -> Data? {
        entry(for: key)?.data
    }

    /// Replaces the metadata of the entry for `key` (after a `304 Not Modified`); its bytes stay.
    public func updateMetadata(_ metadata: CacheMetadata, for key: String) {
        recentRows.forget(key)
        do { _ = try index.update(metadata, for: key) } catch {
            logger.error("disk cache metadata update failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    public func remove(key: String) {
        recentRows.forget(key)
        do { if let file = try index.remove(key: key) { files.remove(file) } } catch {
            logger.error("disk cache remove failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// Removes every entry and file (files of stores still in progress elsewhere too: those
    /// entries then read as misses). Only files named as the cache names them are deleted.
    public func removeAll() throws(DiskCacheError) {
        _ = takeUsage()
        recentRows.forgetAll()
        try index.removeAll()
        for name in files.names(in: files.files, olderThan: -.infinity, now: Date()) where CacheFiles.isEntryName(name) { files.remove(name) }
    }

    // MARK: - Internals

    func limits(sizeLimit: Int? = nil, now: Date = Date()) -> IndexLimits {
        let limit = sizeLimit ?? configuration.sizeLimit
        return IndexLimits(
            sizeLimit: limit, sizeTarget: sizeLimit == nil ? Int(Double(limit) * configuration.trimRatio) : limit,
            ageColumn: configuration.expireType == .accessDate ? "lastAccess" : "storedAt",
            cutoff: now.timeIntervalSince1970 - configuration.maxAge.seconds,
            indexAllowance: footprint.indexAllowance, countsReservations: sizeLimit == nil, entrySizeLimit: configuration.sizeLimit)
    }

    private func isExpired(_ metadata: CacheMetadata, now: Date) -> Bool {
        let date = configuration.expireType == .accessDate ? metadata.lastAccess : metadata.storedAt
        return now.timeIntervalSince(date) > configuration.maxAge.seconds
    }

    /// Drops `row` (only if it still names the same file) and its file; `reason` marks damage.
    func discard(_ row: IndexRow, reason: String?) {
        recentRows.forget(row.key)
        if let reason {
            logger.error("damaged disk cache entry removed", metadata: ["key": "\(row.key)", "file": "\(row.file)", "reason": "\(reason)"])
            metrics.damaged.increment()
            pending.withLock { $0.usage.damaged += 1 }
        }
        let usage = takeUsage()
        do { _ = try index.remove(key: row.key, ifFile: row.file, usage: usage) } catch {
            logger.error("disk cache remove failed", metadata: ["key": "\(row.key)", "error": "\(error)"])
        }
        files.remove(row.file)
    }

    func logged(_ error: DiskCacheError, key: String) -> DiskCacheError {
        logger.error("disk cache store failed", metadata: ["key": "\(key)", "error": "\(error)"])
        metrics.storeFailures.increment()
        return error
    }
}
