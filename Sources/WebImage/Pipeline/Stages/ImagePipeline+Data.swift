import Foundation
import Logging
import Tracing

extension ImagePipeline {
    /// The data stage's sharing key: the data key plus what changes how the bytes are found, and
    /// the request's own headers. The cache keys leave ordinary headers out (`Vary` decides later
    /// whether a stored answer fits); callers in flight cannot wait for that, so two requests that
    /// send different headers (`Accept`, a header a `Vary` names) never join one download.
    func dataJobKey(_ request: ImageRequest) -> String {
        let mask: ImageLoadingOptions = [.refreshCached, .fromCacheOnly, .fromLoaderOnly, .queryMemoryData, .disableDiskRead, .retryFailed]
        let flags = request.options.intersection(mask).rawValue | (request.options.contains(.progressiveLoad) ? 1 << 31 : 0)
        let headers = request.download.headers
        guard flags != 0 || request.context.downloader != nil || !headers.isEmpty else { return request.dataKey }  // the common case: no new string
        var key = String(flags, radix: 16)
        if let downloader = request.context.downloader { key += "@\(ObjectIdentifier(downloader).hashValue)" }
        if !headers.isEmpty {
            var digest = FieldDigest()
            for field in headers { digest.add("h:" + field.name.lowercased(), field.value) }
            key += "#" + digest.hex()
        }
        return key + String(CacheKeyEncoding.flagsSeparator) + request.dataKey
    }

    /// The original bytes, shared by every stage and caller that needs them at once.
    func originalData(
        for request: ImageRequest, in parent: (any StageContext)?, onEvent: @escaping @Sendable (StageEvent) -> Void
    ) async throws -> OriginalData {
        let key = dataJobKey(request)
        let id = dataWork.makeSubscriberID()
        var priority = request.priority
        if let parent {
            priority = parent.onPriorityChange { [dataWork] changed in dataWork.setPriority(changed, key: key, subscriber: id) }
        }
        return try await dataWork.value(for: key, subscriber: id, priority: priority, onEvent: onEvent) { self.dataJob(request) }
    }

    /// The work of one data job (made only by the subscriber that starts it).
    private func dataJob(_ request: ImageRequest) -> @Sendable (DataContext) async throws -> OriginalData {
        { context in
            self.metrics.dataJobs.increment()
            let started = ContinuousClock.now
            defer { self.metrics.dataDuration.recordNanoseconds((ContinuousClock.now - started).nanoseconds) }
            return try await withSpan("webimage.data") { span in
                let original = try await self.fetchOriginal(request, context: context)
                span.attributes["webimage.source"] = original.source.rawValue
                self.logger.debug("original data", metadata: [
                    "key": "\(request.dataKey)", "source": "\(original.source)", "bytes": "\(original.data.count)",
                    "revalidated": "\(original.isRevalidated)"])
                return original
            }
        }
    }

    /// Memory data → disk (fresh, or revalidated) → network, with HTTP semantics.
    private func fetchOriginal(_ request: ImageRequest, context: DataContext) async throws -> OriginalData {
        let key = request.dataKey, options = request.options
        let now = Date()
        if !options.contains(.fromLoaderOnly), options.contains(.queryMemoryData), let memory = configuration.memoryDataCache {
            let names = variedKeys.names(for: key)
            if let data = memory[memoryKey(request, base: key, names: .some(names))] {
                counters.memoryDataHits.add(1, ordering: .relaxed)
                metrics.memoryDataHits.increment()
                return OriginalData(data: data, source: .memory, varyNames: names)
            }
        }
        var stale: DataCacheEntry?
        var staleHolds: [any AnyObject & Sendable] = []
        // With a memory budget, the cache's index is asked for the size first (one query: the disk
        // cache remembers the row it read for the read that follows, and an absent entry is not read).
        if options.readsDisk, let cache = configuration.dataCache,
           case let size = configuration.memoryBudget == nil ? CachedByteCount.unknown : await cache.byteCount(for: key), size != .absent,
           case let early = try await holdEncoded(beforeReading: size.bytes),
           let entry = await cache.entry(for: key), varies(entry.metadata, like: request) {
            // Room was made before the read (the index knows the size): a load that waits holds no bytes yet.
            let holds = try await holdEncoded(entry.data.count, adjusting: early)
            if entry.metadata.isFresh(at: now) && !options.contains(.refreshCached) || options.contains(.fromCacheOnly) {
                metrics.diskHits.increment()
                return OriginalData(
                    data: entry.data, source: .disk, metadata: entry.metadata, varyNames: recordVary(entry.metadata, key), memoryHolds: holds)
            }
            stale = entry
            staleHolds = holds
        }
        if options.contains(.fromCacheOnly) { throw ImagePipelineError.notCached }
        if !options.contains(.retryFailed), let error = failedURLs.error(for: key) {
            metrics.failedListHits.increment()
            throw error
        }
        var download = request.download
        download.validators = stale?.metadata.validators
        if options.contains(.progressiveLoad) {
            download.wantsPartialData = true
            download.progressInterval = .milliseconds(50)
        }
        let downloader = request.context.downloader ?? configuration.downloader
        let ownDownloader = downloader !== configuration.downloader
        let subscriber = downloader.makeSubscriberID()
        let identity = download
        let priority = context.onPriorityChange { changed in downloader.setPriority(changed, request: identity, subscriber: subscriber) }
        download.priority = priority
        counters.downloads.add(1, ordering: .relaxed)
        do throws(ImageDownloadError) {
            let result = try await downloader.download(download, subscriber: subscriber, memory: bodyMemory) { progress in
                context.send(.progress(progress))
            }
            if result.isNotModified {
                guard let stale else { throw ImageDownloadError.badStatusCode(304) }  // validators come only from a stale entry
                let refreshed = configuration.httpCachePolicy.refreshed(stale.metadata, with: result.response, now: Date())
                await configuration.dataCache?.updateMetadata(refreshed, for: key)
                metrics.revalidations.increment()
                return OriginalData(
                    data: stale.data, source: .disk, httpResponse: result.response, metadata: refreshed, isRevalidated: true,
                    varyNames: recordVary(refreshed, key), memoryHolds: staleHolds)
            }
            if options.contains(.retryFailed) { failedURLs.forget(key) }
            let policy = configuration.httpCachePolicy
            // An identity the request modifier sent (a token it added) is not in the key, which
            // is made before the modifier runs. Through a downloader of the request's own, or in
            // a shared cache, the answer belongs to this caller alone: kept nowhere another
            // caller's look-up of the same key would find it.
            let modifierIdentity = result.headersChangedByModifier.contains { configuration.identity.isIdentityHeader($0) }
            let callersAlone = modifierIdentity && (policy.isShared || ownDownloader)
            let hasIdentity = request.identity != nil || modifierIdentity
            var vary = HTTPVary(result.response)  // `Vary: *` is not stored
            if case .headers(let names) = vary, !result.headersChangedByModifier.isDisjoint(with: names) {
                // The request modifier set a header the answer varies by; a look-up does not run the
                // modifier, so it could not tell which value a stored answer was for: as `Vary: *`.
                vary = .any
            }
            var metadata = vary == .any || callersAlone ? nil
                : policy.metadata(for: result.response, byteCount: result.data.count, now: Date(), requestHasIdentity: hasIdentity)
            if case .headers(let names) = vary { metadata?.vary = HTTPVary.values(of: names, in: downloader.sentHeaders(for: download)) }
            // no-store: drop what an older response left (not for a caller's own answer, which says
            // nothing about the entry the others share).
            if metadata == nil, !callersAlone { await configuration.dataCache?.remove(key: key) }
            return OriginalData(
                data: result.data, source: .network, httpResponse: result.response, metadata: metadata,
                store: metadata.map { DeferredStore(key: key, data: result.data, metadata: $0) },
                mayKeepInMemory: (!policy.isShared || metadata != nil) && vary != .any && !callersAlone, varyNames: recordVary(vary, key),
                memoryHolds: result.memoryHolds)
        } catch {
            if error == .cancelled { throw ImagePipelineError.cancelled }
            if let stale, configuration.httpCachePolicy.staleIfError, !stale.metadata.mustRevalidate, error.isTransient {
                logger.warning("revalidation failed; serving the stale entry", metadata: ["url": "\(request.url)", "error": "\(error)"])
                metrics.staleServed.increment()
                return OriginalData(
                    data: stale.data, source: .disk, metadata: stale.metadata, isStale: true, varyNames: recordVary(stale.metadata, key),
                    memoryHolds: staleHolds)
            }
            if case let .overMemoryBudget(requested, limit) = error {
                // The process's state, not the URL's: not remembered as a failed URL.
                throw ImagePipelineError.overBudget(.overBudget(requested: requested, limit: limit))
            }
            let failure = ImagePipelineError.loadingFailed(error)
            // A caller's own downloader with a request modifier may have sent an identity of its
            // own: its failure (a 403 for its token) is not the URL's for every caller.
            if !(ownDownloader && downloader.configuration.requestModifier != nil) { failedURLs.remember(failure, for: key) }
            throw failure
        }
    }

    /// The names a stored entry varied by, recorded for the memory keys (``VariedKeys``).
    private func recordVary(_ metadata: CacheMetadata, _ key: String) -> [String]? {
        let names = metadata.vary.map(HTTPVary.names(in:))
        variedKeys.record(names, for: key)
        return names
    }

    /// The names a response varied by (none for `Vary: *`, which is kept nowhere), recorded.
    private func recordVary(_ vary: HTTPVary, _ key: String) -> [String]? {
        guard case .headers(let names) = vary else {
            if vary == .none { variedKeys.record(nil, for: key) }
            return nil
        }
        variedKeys.record(names, for: key)
        return names
    }

    /// Whether an entry stored with `metadata` may serve `request`: the headers its response's
    /// `Vary` named have the same values in what `request` sends (``HTTPVary``).
    func varies(_ metadata: CacheMetadata, like request: ImageRequest) -> Bool {
        guard let stored = metadata.vary else { return true }
        let downloader = request.context.downloader ?? configuration.downloader
        return HTTPVary.matches(stored, downloader.sentHeaders(for: request.download))
    }

    /// Writes the original bytes once they are known to be an image, if the request allows.
    func commitOriginal(_ original: OriginalData, request: ImageRequest) async {
        guard let store = original.store else { return }
        let policy = request.context.storePolicy
        if policy.original.contains(.memory), !request.options.contains(.disableMemoryWrite), original.mayKeepInMemory {
            configuration.memoryDataCache?[memoryKey(request, base: store.key, names: .some(original.varyNames))] = store.data
        }
        guard policy.original.contains(.disk), !request.options.contains(.disableDiskWrite),
              let cache = configuration.dataCache, store.claim() else { return }
        await write(request) {
            do {
                try await cache.store(store.data, metadata: store.metadata, for: store.key)
            } catch {
                self.metrics.diskStoreFailures.increment()  // logged by the cache; the image is still delivered
            }
        }
    }

    /// Runs a cache write now (``ImageLoadingOptions/waitStoreCache``) or in the background.
    func write(_ request: ImageRequest, _ body: @escaping @Sendable () async -> Void) async {
        if request.options.contains(.waitStoreCache) { await body() } else { await pendingStores.run(body) }
    }
}
