import Foundation
internal import Logging

extension DiskCache {
    /// What `trim` removed.
    public struct TrimReport: Sendable, Equatable, Codable {
        public var expired: Int
        public var evicted: Int
        public var orphansRemoved: Int
    }

    /// Entries, bytes, oldest dates and hit counts (batched usage is written first).
    ///
    /// ```swift
    /// let stats = try cache.statistics()
    /// print(stats.count, stats.totalSize, stats.hits, stats.misses)
    /// ```
    public func statistics() throws(DiskCacheError) -> Statistics {
        try index.flush(takeUsage())
        return try index.statistics()
    }

    /// Applies the limits now: expired entries go, then least recently used ones until the total
    /// is within ``Configuration/sizeLimit``; orphan files past their grace period are removed.
    @discardableResult
    public func trim() throws(DiskCacheError) -> TrimReport {
        try trim(toSize: configuration.sizeLimit)
    }

    /// Like ``trim()``, down to `size` bytes.
    @discardableResult
    public func trim(toSize size: Int) throws(DiskCacheError) -> TrimReport {
        let policy = ReservationPolicy(owner: owner, now: Date().timeIntervalSince1970, grace: configuration.orphanGracePeriod.seconds)
        let result = try index.trim(limits: limits(sizeLimit: size), usage: takeUsage(), policy: policy)
        recentRows.forgetAll()
        applied(result)
        return TrimReport(expired: result.expired, evicted: result.evicted, orphansRemoved: sweepOrphans())
    }

    /// Reads every entry and checks its size and checksum; damaged entries and rows whose file
    /// is gone are removed (and logged), and orphan files past their grace period are deleted.
    ///
    /// ```swift
    /// let report = try cache.verify()
    /// print(report.checked, report.damaged.count)
    /// ```
    public func verify() throws(DiskCacheError) -> VerifyReport {
        var report = VerifyReport(checked: 0, damaged: [], missing: [], orphansRemoved: 0)
        var last = ""
        while true {
            let page = try index.rows(after: last, limit: 256)
            guard let tail = page.last else { break }
            last = tail
            for key in page.undecodable {
                // Values of the wrong type (written by something else): no entry can be read from it.
                report.damaged.append(key)
                logger.error("damaged disk cache entry removed", metadata: ["key": "\(key)", "reason": "unreadable index row"])
                do { if let file = try index.remove(key: key) { files.remove(file) } } catch {}
            }
            for row in page.rows {
                // Read at most the size the row records (and one byte more): a file grown past it,
                // or a row sized past the cache's limit, is not read into memory whole.
                guard row.size >= 0, row.size <= configuration.sizeLimit else {
                    report.damaged.append(row.key)
                    discard(row, reason: "size \(row.size) outside the cache's limit of \(configuration.sizeLimit) bytes")
                    continue
                }
                guard CacheFiles.isEntryName(row.file) else {
                    report.damaged.append(row.key)
                    discard(row, reason: "\(row.file.debugDescription) is not a cache file name")
                    continue
                }
                switch files.read(row.file, expectedSize: row.size) {
                case .missing:
                    report.missing.append(row.key)
                    discard(row, reason: "file missing")
                case .failed(let reason):
                    logger.error("disk cache verify could not read", metadata: ["file": "\(row.file)", "error": "\(reason)"])
                case .bytes(let data):
                    report.checked += 1
                    if data.count != row.size || data.withUnsafeBytes(ContentChecksum.of) != row.checksum {
                        report.damaged.append(row.key)
                        discard(row, reason: data.count == row.size ? "checksum mismatch" : "size \(data.count), expected \(row.size)")
                    }
                }
            }
        }
        report.orphansRemoved = sweepOrphans()
        return report
    }

    /// Deletes files that no index row names and temporary files, both only when older than
    /// ``Configuration/orphanGracePeriod`` (a younger one may be another process's store in
    /// progress), and only regular files named as the cache names them
    /// (``CacheFiles/isEntryName(_:)``): a folder given as a cache by mistake keeps its own files.
    /// Files of the pre-index format at the top level (64 hex digits) are no longer deleted:
    /// a folder that is no cache may hold files named so (content-addressed stores do).
    @discardableResult
    func sweepOrphans() -> Int {
        let now = Date()
        let grace = configuration.orphanGracePeriod.seconds
        guard let known = try? index.fileNames() else { return 0 }
        var removed = 0
        for name in files.names(in: files.files, olderThan: grace, now: now) where CacheFiles.isEntryName(name) && !known.contains(name) {
            files.remove(name)
            removed += 1
        }
        for name in files.names(in: files.incoming, olderThan: grace, now: now) where CacheFiles.isTemporaryName(name) {
            unlink(files.incoming.appendingPathComponent(name).path)
        }
        if removed > 0 { logger.info("disk cache removed orphan files", metadata: ["count": "\(removed)"]) }
        return removed
    }

    /// Once per ``Configuration/orphanSweepInterval`` over all processes (recorded in the index).
    func sweepOrphansIfDue() {
        let interval = configuration.orphanSweepInterval
        let check = pending.withLock { state -> Bool in
            if let last = state.lastSweepCheck, last.duration(to: .now) < min(interval, .seconds(60)) { return false }
            state.lastSweepCheck = .now
            return true
        }
        guard check, (try? index.claimSweep(now: Date().timeIntervalSince1970, interval: interval.seconds)) == true else { return }
        sweepOrphans()
    }

}
