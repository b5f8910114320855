import Foundation

extension ImagePipeline {
    /// The memory caches' key for `request`: `base` (its image or data key), or — when the
    /// response varied by request headers (`Vary`) — `base` plus a digest of those headers' names
    /// and the values this request sends. Reads take the names from the last response seen for
    /// the data key (``VariedKeys``); writes pass the names of the response they keep, so an
    /// image is only ever found by a request that sends what its response varied by.
    func memoryKey(_ request: ImageRequest, base: String, names: [String]?? = .none) -> String {
        guard let varied = names ?? variedKeys.names(for: request.dataKey) else { return base }
        let downloader = request.context.downloader ?? configuration.downloader
        var digest = FieldDigest()
        digest.add("vary", HTTPVary.values(of: varied, in: downloader.sentHeaders(for: request.download)))
        return CacheKeyEncoding.varied(base, digest: digest.hex())
    }

    /// The memory cache's key of `request`'s final image (see ``memoryKey(_:base:names:)``).
    func memoryImageKey(_ request: ImageRequest, names: [String]?? = .none) -> String {
        memoryKey(request, base: request.imageKey, names: names)
    }
}
