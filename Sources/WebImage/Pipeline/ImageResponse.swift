public import Foundation

/// Where a pipeline found an image (SDWebImage's `SDImageCacheType`).
public enum ImageSource: String, Sendable, Hashable, Codable, CaseIterable {
    case memory, disk, network
}

/// A loaded image and how it was obtained.
public struct ImageResponse: Sendable {
    /// The decoded image.
    public var image: Image
    /// The original encoded bytes, when the pipeline had them (disk and network loads).
    public var data: Data?
    /// Where the image came from.
    public var source: ImageSource
    /// The HTTP response, for network loads.
    public var httpResponse: DataResponse?
    /// The request that produced it.
    public var request: ImageRequest

    public init(image: Image, data: Data?, source: ImageSource, httpResponse: DataResponse? = nil, request: ImageRequest) {
        self.image = image
        self.data = data
        self.source = source
        self.httpResponse = httpResponse
        self.request = request
    }
}
