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
    public var image: Image
    /// The original encoded bytes, when the pipeline had them (disk and network loads).
    public var data: Data?
    /// Where the image came from.
    public var source: ImageSource
    /// The HTTP response, for network loads.
    public var httpResponse: DataResponse?
    /// The request that produced it.
    public var request: ImageRequest {
        get { storedRequest ?? ImageRequest(url: url) }
        set { storedRequest = newValue; url = newValue.url }
    }
    /// The URL asked for; for `image(for: url)` memory hits the request is made from it only
    /// when read, so a hit costs no request.
    private var url: URL
    private var storedRequest: ImageRequest?
    /// The disk entry was stale and the origin confirmed it (`304 Not Modified`).
    public var isRevalidated: Bool
    /// The disk entry was stale and revalidation failed (network error or 5xx): served anyway
    /// (stale-if-error).
    public var isStale: Bool

    public init(
        image: Image, data: Data?, source: ImageSource, httpResponse: DataResponse? = nil, request: ImageRequest,
        isRevalidated: Bool = false, isStale: Bool = false
    ) {
        self.image = image
        self.data = data
        self.source = source
        self.httpResponse = httpResponse
        self.storedRequest = request
        self.url = request.url
        self.isRevalidated = isRevalidated
        self.isStale = isStale
    }
}

extension ImageResponse {
    /// A memory hit for a plain URL request.
    init(memoryHit image: Image, url: URL) {
        self.image = image
        self.data = nil
        self.source = .memory
        self.httpResponse = nil
        self.storedRequest = nil
        self.url = url
        self.isRevalidated = false
        self.isStale = false
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
}
