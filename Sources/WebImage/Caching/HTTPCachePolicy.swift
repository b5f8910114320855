public import Foundation

/// How HTTP caching headers decide what the disk cache keeps and for how long.
///
/// - `Cache-Control: no-store` is never written to disk (the image still reaches the caller and
///   the memory cache of the running process).
/// - `no-cache`, and entries past `max-age` / `Expires`, are revalidated with a conditional
///   request before use; a `304` refreshes the metadata and serves the cached bytes.
/// - ``staleIfError`` serves a stale entry when its revalidation fails (a network error, a 5xx),
///   except an entry stored with `must-revalidate` / `proxy-revalidate`, whose failure comes through.
/// - A response with no freshness information is fresh for ``defaultMaxAge`` (7 days, as
///   SDWebImage keeps everything), or — with ``heuristicFreshness`` — for 10 % of the time since
///   its `Last-Modified`, as RFC 9111 § 4.2.2 allows.
/// - A *shared* cache (``isShared``, the cache of a server that answers many users, such as
///   `webimage serve`) follows RFC 9111 § 3.5: it never stores a `private` response, stores a
///   response to a request with an identity (`Authorization`, credentials, cookies, identity
///   headers) only when the response allows it (`public`, `s-maxage` or `must-revalidate`), and
///   prefers `s-maxage` to `max-age`. What it does not store stays out of the memory caches too.
///   The default is a private cache (one user's, as in SDWebImage and Nuke): `private` responses
///   and authorized ones are stored, under keys that include the identity.
///
/// ```swift
/// var policy = HTTPCachePolicy()
/// policy.defaultMaxAge = .seconds(3600)
/// let metadata = policy.metadata(for: response, byteCount: data.count, now: .now)  // nil: no-store
/// ```
public struct HTTPCachePolicy: Sendable, Hashable {
    /// Freshness of a response that states none. Default 7 days.
    public var defaultMaxAge: Duration
    /// Derive freshness from `Last-Modified` when no explicit lifetime is given.
    public var heuristicFreshness: Bool
    /// Serve a stale entry when revalidation fails with a network error or a 5xx (logged) —
    /// unless the response said `must-revalidate` (``CacheMetadata/mustRevalidate``).
    public var staleIfError: Bool
    /// How long a `404` / `410` is remembered, so repeated requests fail without reaching the
    /// origin. Zero turns negative caching off.
    public var negativeTTL: Duration
    /// Whether the caches serve many users (RFC 9111's shared cache). Default `false`: a private
    /// cache, the client library's case.
    public var isShared: Bool

    public init(
        defaultMaxAge: Duration = .seconds(7 * 24 * 3600), heuristicFreshness: Bool = false, staleIfError: Bool = true,
        negativeTTL: Duration = .seconds(60), isShared: Bool = false
    ) {
        self.isShared = isShared
        self.defaultMaxAge = defaultMaxAge
        self.heuristicFreshness = heuristicFreshness
        self.staleIfError = staleIfError
        self.negativeTTL = negativeTTL
    }

    /// The metadata to store for `response`, or `nil` when it must not be stored (`no-store`; in
    /// a shared cache also `private`, and an identity's response that does not allow it).
    /// `requestHasIdentity`: the request carried credentials, `Authorization`, cookies or an
    /// identity header (RFC 9111 § 3.5).
    public func metadata(for response: DataResponse, byteCount: Int, now: Date, requestHasIdentity: Bool = false) -> CacheMetadata? {
        let control = CacheControl(response.listValue(forHeader: "Cache-Control"))
        guard !control.noStore, mayStoreShared(control, requestHasIdentity: requestHasIdentity) else { return nil }
        return CacheMetadata(
            url: response.url.absoluteString, contentType: response.value(forHeader: "Content-Type"), byteCount: byteCount,
            etag: response.value(forHeader: "ETag"), lastModified: response.value(forHeader: "Last-Modified"),
            expiresAt: expiry(of: response, control: control, now: now),
            requiresRevalidation: control.noCache, mustRevalidate: control.mustRevalidate, storedAt: now)
    }

        /// Whether a shared cache may store a response with `control` (always true in a private one).
    public func mayStore(_ response: DataResponse, requestHasIdentity: Bool) -> Bool {
        let control = CacheControl(response.listValue(forHeader: "Cache-Control"))
        return !control.noStore && mayStoreShared(control, requestHasIdentity: requestHasIdentity)
    }

    private func mayStoreShared(_ control: CacheControl, requestHasIdentity: Bool) -> Bool {
        guard isShared else { return true }
        if control.isPrivate { return false }
        return !requestHasIdentity || control.isPublic || control.sharedMaxAge != nil || control.mustRevalidate
    }

/// `cached` after a `304 Not Modified`: the new response's headers replace the old ones
    /// where present (RFC 9111 § 4.3.4) and the freshness starts again.
    public func refreshed(_ cached: CacheMetadata, with response: DataResponse, now: Date) -> CacheMetadata {
        var merged = cached
        let control = CacheControl(response.listValue(forHeader: "Cache-Control"))
        if let etag = response.value(forHeader: "ETag") { merged.etag = etag }
        if let modified = response.value(forHeader: "Last-Modified") { merged.lastModified = modified }
        if response.value(forHeader: "Cache-Control") != nil || response.value(forHeader: "Expires") != nil {
            merged.requiresRevalidation = control.noCache
            merged.mustRevalidate = control.mustRevalidate
            merged.expiresAt = expiry(of: response, control: control, now: now)
        } else if !cached.requiresRevalidation {
            // Same lifetime as before, counted from now.
            merged.expiresAt = cached.expiresAt.map { now.addingTimeInterval($0.timeIntervalSince(cached.storedAt)) }
        }
        merged.storedAt = now
        merged.lastAccess = now
        return merged
    }

    private func expiry(of response: DataResponse, control: CacheControl, now: Date) -> Date? {
        // Every number is range-checked (HTTPHeaderValue): seconds at most 2^31, dates within
        // years 1601–9999, so the arithmetic below stays finite, and a lifetime is at most 2^31 s.
        let age = response.value(forHeader: "Age").flatMap(HTTPHeaderValue.deltaSeconds) ?? 0
        func fresh(for seconds: Double) -> Date {
            now.addingTimeInterval(min(max(0, seconds), Double(HTTPHeaderValue.deltaSecondsLimit)))
        }
        if isShared, let sharedMaxAge = control.sharedMaxAge { return fresh(for: Double(sharedMaxAge - age)) }
        if let maxAge = control.maxAge { return fresh(for: Double(maxAge - age)) }
        if let expires = response.value(forHeader: "Expires") {
            guard let expiresDate = HTTPHeaderValue.date(expires) else { return now }  // invalid Expires: already stale
            let date = response.value(forHeader: "Date").flatMap(HTTPHeaderValue.date) ?? now
            return fresh(for: expiresDate.timeIntervalSince(date) - Double(age))
        }
        if heuristicFreshness, let modified = response.value(forHeader: "Last-Modified").flatMap(HTTPHeaderValue.date) {
            let date = response.value(forHeader: "Date").flatMap(HTTPHeaderValue.date) ?? now
            return fresh(for: date.timeIntervalSince(modified) / 10 - Double(age))
        }
        return now.addingTimeInterval(defaultMaxAge.seconds)
    }
}
