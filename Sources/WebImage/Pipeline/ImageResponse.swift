public import Foundation

/// Where a pipeline found an image (SDWebImage's `SDImageCacheType`).
public enum ImageSource: String, Sendable, Hashable, Codable, CaseIterable {
    case memory, disk, network
}

/// A loaded image and how it was obtained.
///
/// ```swift
/// let response = try await pipeline.image(for: url)
/// print(response.source, response.isRevalidated, response.image.pixelWidth)
/// ```
public struct ImageResponse: Sendable {
    /// The decoded image (header only, with ``ImageLoadingOptions/avoidDecode``).
    public var image: Image {
        get { storage.reference.image }
        set { unique().reference = ImageReference(newValue) }
    }
    /// The image in the box the memory cache keeps it in: while a caller holds it (or this
    /// response), the cache's weak layer finds the image again after evicting it from its LRU,
    /// with no decode (``MemoryCache/Configuration/usesWeakLayer``).
    public var reference: ImageReference { storage.reference }
    /// The original encoded bytes, when the pipeline had them (disk and network loads).
    public var data: Data? {
        get { storage.data }
        set { unique().data = newValue }
    }
    /// Where the image came from.
    public var source: ImageSource {
        get { storage.source }
        set { unique().source = newValue }
    }
    /// The HTTP response, for network loads.
    public var httpResponse: DataResponse? {
        get { storage.httpResponse }
        set { unique().httpResponse = newValue }
    }
    /// The request that produced it.
    public var request: ImageRequest {
        get { storage.request ?? ImageRequest(url: storage.url) }
        set {
            let storage = unique()
            storage.request = newValue
            storage.url = newValue.url
        }
    }
    /// The disk entry was stale and the origin confirmed it (`304 Not Modified`).
    public var isRevalidated: Bool {
        get { storage.isRevalidated }
        set { unique().isRevalidated = newValue }
    }
    /// The disk entry was stale and revalidation failed (network error or 5xx): served anyway
    /// (stale-if-error).
    public var isStale: Bool {
        get { storage.isStale }
        set { unique().isStale = newValue }
    }

    /// One reference to every field: a response handed to 10,000 callers of one image costs each
    /// one retain and one release, not one per field (those counts, on objects every caller
    /// shares, were a measurable part of a caller's cost).
    private var storage: Storage

    /// The fields. Written only through `unique()`, which copies a shared storage first, so no
    /// storage is ever written while another thread can read it: hence `@unchecked Sendable`.
    private final class Storage: @unchecked Sendable {
        var reference: ImageReference
        var data: Data?
        var source: ImageSource
        var httpResponse: DataResponse?
        /// The URL asked for; for `image(for: url)` memory hits the request is made from it only
        /// when read, so a hit costs no request.
        var url: URL
        var request: ImageRequest?
        var isRevalidated: Bool
        var isStale: Bool

        init(
            reference: ImageReference, data: Data?, source: ImageSource, httpResponse: DataResponse?, url: URL, request: ImageRequest?,
            isRevalidated: Bool, isStale: Bool
        ) {
            self.reference = reference
            self.data = data
            self.source = source
            self.httpResponse = httpResponse
            self.url = url
            self.request = request
            self.isRevalidated = isRevalidated
            self.isStale = isStale
        }

        func copy() -> Storage {
            Storage(
                reference: reference, data: data, source: source, httpResponse: httpResponse, url: url, request: request,
                isRevalidated: isRevalidated, isStale: isStale)
        }
    }

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    public init(
        image: Image, data: Data?, source: ImageSource, httpResponse: DataResponse? = nil, request: ImageRequest,
        isRevalidated: Bool = false, isStale: Bool = false
    ) {
        self.init(
            reference: ImageReference(image), data: data, source: source, httpResponse: httpResponse, request: request,
            isRevalidated: isRevalidated, isStale: isStale)
    }

    /// A response holding `reference`, the memory cache's box for the image.
    init(
        reference: ImageReference, data: Data?, source: ImageSource, httpResponse: DataResponse? = nil, request: ImageRequest,
        isRevalidated: Bool = false, isStale: Bool = false
    ) {
        storage = Storage(
            reference: reference, data: data, source: source, httpResponse: httpResponse, url: request.url, request: request,
            isRevalidated: isRevalidated, isStale: isStale)
    }
}

extension ImageResponse {
    /// A memory hit for a plain URL request.
    init(memoryHit reference: ImageReference, url: URL) {
        storage = Storage(
            reference: reference, data: nil, source: .memory, httpResponse: nil, url: url, request: nil, isRevalidated: false, isStale: false)
    }
}

/// Original bytes from ``ImagePipeline/data(for:)``, with no pixels decoded.
///
/// ```swift
/// let original = try await pipeline.data(for: ImageRequest(url: url))
/// try original.data.write(to: file)
/// ```
public struct ImageDataResponse: Sendable {
    public var data: Data
    public var source: ImageSource
    public var httpResponse: DataResponse?
    public var isRevalidated: Bool
    public var isStale: Bool
    /// What the header says (format, size, frames); read without decoding pixels.
    public var header: ImageHeader
    /// The memory budget's reservations for ``data``: the bytes count against it while this
    /// response (or a copy) is held.
    var memoryHolds: [any AnyObject & Sendable] = []
    /// The bytes of the memory budget this response holds for ``data`` (0 when it holds none):
    /// what to pass as `holding` to ``MemoryBudget/reserve(_:waitingAtMost:for:holding:)`` for
    /// work on these bytes.
    public var reservedBytes: Int { MemoryBudget.heldBytes(memoryHolds) }
}
