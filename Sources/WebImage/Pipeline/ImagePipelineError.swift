/// Why ``ImagePipeline`` could not produce an image.
///
/// `indirect`: each case's details are boxed, so the error is one word and `throws(ImagePipelineError)`
/// hands it back in registers. Unboxed it was 33 bytes, returned through a buffer that every
/// async caller — the pipeline's own frames and the app's — kept in its task frame while waiting:
/// with 10,000 callers of one image, that pushed each waiting caller into a second 1 KB task
/// allocator slab (one more malloc and free per caller, about a fifth of a caller's cost).
public indirect enum ImagePipelineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The download failed (also when the URL is on the failed list: the remembered error,
    /// with no new request).
    case loadingFailed(ImageDownloadError)
    /// The bytes arrived but are not a decodable image; nothing was cached.
    case decodingFailed(ImageDecodingError)
    /// A processor failed; nothing was cached.
    case processingFailed(ImageProcessingError)
    /// ``ImageLoadingOptions/fromCacheOnly`` and no cache has the image.
    case notCached
    /// The pixels would not fit the ``MemoryBudget`` (more than all of it, or no room came
    /// within ``ImagePipeline/Configuration/memoryBudgetWait``); nothing was cached.
    case overBudget(MemoryBudgetError)
    /// The caller cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .loadingFailed(let error): error.description
        case .decodingFailed(let error): error.description
        case .processingFailed(let error): error.description
        case .notCached: "not in any cache (cache-only request)"
        case .overBudget(let error): error.description
        case .cancelled: "cancelled"
        }
    }

    /// Whether trying again later cannot help: the failed list keeps these URLs for a while
    /// (404, 410, undecodable data — never timeouts, cancellations, 5xx, a killed decode worker,
    /// or a limit or option of one request that another may not share).
    var isPermanent: Bool {
        switch self {
        case .loadingFailed(.badStatusCode(let code)), .loadingFailed(.lookupFailed(.badStatusCode(let code))): code == 404 || code == 410
        case .loadingFailed(.resolverFailed): true  // the look-up answered, with no image URL
        case .decodingFailed(let error): error.blamesData
        default: false
        }
    }
}
