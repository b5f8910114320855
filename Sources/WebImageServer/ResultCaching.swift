import WebImage

/// Who may keep a render, decided by the source's own `Cache-Control`.
///
/// A render of a source its origin marked `no-store` or `private` is not the server's to share:
/// it is not kept in the result caches, and its answer says so to every cache in front
/// (`Cache-Control: no-store`, or `private, no-cache` which lets the asking browser keep it
/// and revalidate by ETag). Sources answered from the source cache were storable by a shared
/// cache when they arrived, so their renders stay `public`. imgproxy keeps such renders public
/// unless `IMGPROXY_CACHE_CONTROL_PASSTHROUGH` is set; a proxy that caches for everyone
/// should not need a setting to respect an origin that asked it not to. `local://` sources are
/// always `.shared`.
///
/// ```swift
/// let caching = ResultCaching(original)      // .shared for a plain public image
/// if caching == .shared { results.store(rendered, for: key) }
/// ```
enum ResultCaching: Equatable, Sendable {
    /// Any cache may keep it (the configured `public, max-age`).
    case shared
    /// Only the asking client's own cache: the source said `private`.
    case privateOnly
    /// No cache: the source said `no-store`.
    case noStore

    init(_ original: ImageDataResponse) {
        // A local file's `no-store` only keeps it out of the source caches (`LocalSourceLoader`):
        // it is the operator's own file, its renders are shared.
        guard original.source == .network, let response = original.httpResponse, response.url.scheme != SourceURL.localScheme else {
            self = .shared
            return
        }
        if !HTTPCachePolicy(isShared: false).mayStore(response, requestHasIdentity: false) {
            self = .noStore
        } else if !HTTPCachePolicy(isShared: true).mayStore(response, requestHasIdentity: false) {
            self = .privateOnly
        } else {
            self = .shared
        }
    }

    /// The `Cache-Control` of an answer, for a shared lifetime of `maxAge` seconds.
    func cacheControl(maxAge: Int) -> String {
        switch self {
        case .shared: "public, max-age=\(maxAge)"
        case .privateOnly: "private, no-cache"
        case .noStore: "no-store"
        }
    }
}
