/// Why ``ImagePipeline`` could not produce an image.
public enum ImagePipelineError: Error, Sendable, CustomStringConvertible {
    /// The download failed.
    case loadingFailed(ImageDownloadError)
    /// The bytes arrived but are not a decodable image; nothing was cached.
    case decodingFailed(ImageDecodingError)
    /// The caller cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .loadingFailed(let error): error.description
        case .decodingFailed(let error): error.description
        case .cancelled: "cancelled"
        }
    }
}
