public import Foundation

/// What to load and how.
///
/// ```swift
/// let request = ImageRequest(url: url, priority: .high)
/// let response = try await pipeline.image(for: request)
/// ```
public struct ImageRequest: Sendable, Hashable {
    /// The image's URL; also its identity (cache key and coalescing key) unless ``cacheKey`` is set.
    public var url: URL
    /// Download priority.
    public var priority: RequestPriority
    /// Extra headers for this request.
    public var headers: [HTTPField]
    /// Overrides the key under which the image is cached and coalesced.
    public var cacheKeyOverride: String?

    public init(url: URL, priority: RequestPriority = .normal, headers: [HTTPField] = [], cacheKey: String? = nil) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.cacheKeyOverride = cacheKey
    }

    /// The key in the memory and disk caches.
    public var cacheKey: String { cacheKeyOverride ?? url.absoluteString }
}
