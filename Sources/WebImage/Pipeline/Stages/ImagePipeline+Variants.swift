import Foundation

/// A processed variant on disk follows its original: it is stored with the original's current
/// metadata (freshness, validators; nothing when the original may not be stored), it is fresh
/// exactly as long as the original is, and when it is stale the original is asked for again —
/// a `304`, or an original with the validators the variant was made from, serves the variant
/// again with the original's new freshness, without decoding or processing anything.
extension ImagePipeline {
    /// What the disk holds for a variant request.
    enum CachedVariant {
        /// Fresh (or the request reads the cache only): served as it is.
        case fresh(ImageResponse)
        /// Stale, or the request asks for a refresh: usable only if its original did not change.
        case stale(DataCacheEntry)
    }

    /// The variant stored on disk earlier for `request`, if the request may use one.
    func cachedVariant(for request: ImageRequest) async -> CachedVariant? {
        guard request.isVariant, request.options.readsDisk, !request.options.contains(.avoidDecode),
              request.context.storePolicy.final.contains(.disk),
              let cache = configuration.dataCache, let entry = await cache.entry(for: request.imageKey),
              varies(entry.metadata, like: request) else { return nil }
        let usable = entry.metadata.isFresh(at: Date()) && !request.options.contains(.refreshCached)
        guard usable || request.options.contains(.fromCacheOnly) else { return .stale(entry) }
        guard let image = await decodeVariant(entry, for: request) else { return nil }
        return .fresh(ImageResponse(reference: image, data: nil, source: .disk, request: request))
    }

    /// The stale `variant` served again when `original` holds the bytes it was made from (the
    /// origin answered `304`, or the original has the same validators); its metadata becomes
    /// the original's current one. `nil` when the original changed or nothing tells (no
    /// validators, a memory-data hit): the caller processes the original again.
    func reuse(_ variant: DataCacheEntry, for request: ImageRequest, original: OriginalData) async -> ImageResponse? {
        guard original.source != .memory, let current = original.metadata, variant.metadata.hasSameValidators(as: current),
              let cache = configuration.dataCache else { return nil }
        guard let image = await decodeVariant(variant, for: request) else { return nil }
        if !original.isStale {
            var refreshed = current
            refreshed.byteCount = variant.metadata.byteCount
            refreshed.contentType = variant.metadata.contentType
            await cache.updateMetadata(refreshed, for: request.imageKey)
        }
        // Bytes fetched again with the same validators are the original's new entry, once
        // their header reads (a full decode is what the reuse saves).
        let coders = request.context.coders ?? configuration.coders
        if original.store != nil, (try? coders.readHeader(original.data)) != nil { await commitOriginal(original, request: request) }
        metrics.revalidations.increment()
        return ImageResponse(
            reference: image, data: nil, source: .disk, httpResponse: original.httpResponse, request: request,
            isRevalidated: original.isRevalidated, isStale: original.isStale)
    }

    /// The variant's bytes decoded (and kept in memory as the request allows); an entry that
    /// does not decode is removed.
    private func decodeVariant(_ entry: DataCacheEntry, for request: ImageRequest) async -> ImageReference? {
        let coders = request.context.coders ?? configuration.coders
        var options = configuration.decodingOptions
        options.scale = Image.scaleFactor(forKey: request.dataKey)
        guard let image = try? coders.decode(entry.data, options: options) else {
            await configuration.dataCache?.remove(key: request.imageKey)
            return nil
        }
        counters.variantDiskHits.add(1, ordering: .relaxed)
        metrics.variantDiskHits.increment()
        metrics.diskImages.increment()
        let reference = ImageReference(image)
        if request.context.storePolicy.final.contains(.memory), !request.options.contains(.disableMemoryWrite) {
            let names = entry.metadata.vary.map(HTTPVary.names(in:))
            variedKeys.record(names, for: request.dataKey)
            configuration.memoryCache?.insert(reference, forKey: memoryImageKey(request, names: .some(names)))
        }
        return reference
    }

    /// A variant's bytes onto disk (per the store policy), with its original's current metadata:
    /// never for an original that may not be stored, or whose metadata is unknown.
    func storeVariant(_ image: Image, original: OriginalData, request: ImageRequest) async {
        guard image.isDecoded, request.isVariant, request.context.storePolicy.final.contains(.disk),
              !request.options.contains(.disableDiskWrite), var metadata = original.metadata,
              let cache = configuration.dataCache else { return }
        let serializer = request.context.cacheSerializer ?? .default(coders: request.context.coders ?? configuration.coders)
        guard let bytes = serializer.serialize(image, original.data) else { return }
        metadata.byteCount = bytes.count
        metadata.contentType = ImageFormat(sniffing: bytes)?.mimeType
        metadata.lastAccess = Date()
        let stored = metadata
        await write(request) {
            do { try await cache.store(bytes, metadata: stored, for: request.imageKey) } catch { self.metrics.diskStoreFailures.increment() }
        }
    }
}

extension CacheMetadata {
    /// Whether `other` names the same representation: the same `ETag`, or — when neither has
    /// one — the same `Last-Modified`. False when there is nothing to compare.
    func hasSameValidators(as other: CacheMetadata) -> Bool {
        if let etag { return etag == other.etag }
        guard other.etag == nil, let lastModified else { return false }
        return lastModified == other.lastModified
    }
}
