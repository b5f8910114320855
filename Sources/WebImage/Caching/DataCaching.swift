public import Foundation

/// A store of original image bytes that survives the process (the disk cache), with the HTTP
/// metadata the pipeline needs to decide whether an entry is still fresh.
///
/// ```swift
/// let disk = try DiskCache(directory: cacheDir)
/// try await disk.store(data, metadata: CacheMetadata(byteCount: data.count), for: key)
/// if let entry = await disk.entry(for: key), entry.metadata.isFresh(at: .now) { use(entry.data) }
/// ```
public protocol DataCaching: Sendable {
    /// The entry for `key`: bytes that passed their checksum, and their metadata. A damaged
    /// entry is a miss (and is removed).
    func entry(for key: String) async -> DataCacheEntry?
    /// Stores `data` under `key`, replacing any entry.
    func store(_ data: Data, metadata: CacheMetadata, for key: String) async throws
    /// Replaces the metadata of an existing entry (after a `304 Not Modified`); no-op when absent.
    func updateMetadata(_ metadata: CacheMetadata, for key: String) async
    func remove(key: String) async
    func removeAll() async throws
    /// What the cache knows of `key`'s size without reading its bytes (from its index): the
    /// size, so that a caller can make room in its memory budget before the read; that there is
    /// no entry, so that it need not read; or nothing until the read. The default is ``CachedByteCount/unknown``.
    ///
    /// ```swift
    /// if case .bytes(let size) = await disk.byteCount(for: key) { hold = try await budget.reserve(size, waitingAtMost: .seconds(5)) }
    /// ```
    func byteCount(for key: String) async -> CachedByteCount
}

extension DataCaching {
    public func byteCount(for key: String) async -> CachedByteCount { .unknown }

    /// The bytes for `key`, fresh or not.
    public func data(for key: String) async -> Data? {
        await entry(for: key)?.data
    }

    /// Stores `data` with no HTTP metadata (fresh for the cache's default age).
    public func store(_ data: Data, for key: String) async throws {
        try await store(data, metadata: CacheMetadata(byteCount: data.count), for: key)
    }
}

/// Bytes read from a ``DataCaching`` and what is known about them.
public struct DataCacheEntry: Sendable {
    public var data: Data
    public var metadata: CacheMetadata

    public init(data: Data, metadata: CacheMetadata) {
        self.data = data
        self.metadata = metadata
    }
}

/// What a cache keeps beside an entry's bytes.
///
/// ```swift
/// let metadata = HTTPCachePolicy().metadata(for: response, byteCount: data.count, now: .now)
/// ```
public struct CacheMetadata: Sendable, Hashable, Codable {
    /// The URL the bytes came from.
    public var url: String?
    public var contentType: String?
    public var byteCount: Int
    public var etag: String?
    public var lastModified: String?
    /// When the entry stops being fresh; `nil` means fresh until the cache's age limit.
    public var expiresAt: Date?
    /// `Cache-Control: no-cache` (or `must-revalidate` past expiry): ask the origin before use.
    public var requiresRevalidation: Bool
    /// `Cache-Control: must-revalidate` (or `proxy-revalidate`): once stale, the bytes are never
    /// served without the origin's word, not even when it fails (no stale-if-error, RFC 9111 § 4.2.4).
    public var mustRevalidate: Bool
    public var storedAt: Date
    public var lastAccess: Date
    /// For a response with `Vary`: the values the request sent of the headers it names, one
    /// `name:value` line each (`name` alone when absent; names lowercased, sorted). The entry
    /// serves only a request with the same values (`HTTPCachePolicy.varyValues(_:request:)`).
    /// `nil`: no `Vary`.
    public var vary: String?

    public init(
        url: String? = nil, contentType: String? = nil, byteCount: Int, etag: String? = nil, lastModified: String? = nil,
        expiresAt: Date? = nil, requiresRevalidation: Bool = false, mustRevalidate: Bool = false, storedAt: Date = .now,
        lastAccess: Date? = nil, vary: String? = nil
    ) {
        self.url = url
        self.contentType = contentType
        self.byteCount = byteCount
        self.etag = etag
        self.lastModified = lastModified
        self.expiresAt = expiresAt
        self.requiresRevalidation = requiresRevalidation
        self.mustRevalidate = mustRevalidate
        self.storedAt = storedAt
        self.lastAccess = lastAccess ?? storedAt
        self.vary = vary
    }

    /// Whether the bytes may be used without asking the origin.
    public func isFresh(at now: Date) -> Bool {
        !requiresRevalidation && (expiresAt.map { now < $0 } ?? true)
    }

    /// The validators for a conditional request, if the origin gave any.
    public var validators: CacheValidators? {
        etag == nil && lastModified == nil ? nil : CacheValidators(etag: etag, lastModified: lastModified)
    }
}
