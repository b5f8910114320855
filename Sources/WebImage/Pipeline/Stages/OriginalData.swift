import Foundation
import Synchronization

/// Events that travel up the task graph, from the download to each caller.
enum StageEvent: Sendable {
    case progress(DownloadProgress)
    case preview(Image)
}

/// The original bytes of an image as the data stage found them.
struct OriginalData: Sendable {
    var data: Data
    var source: ImageSource
    var httpResponse: DataResponse?
    /// The original's HTTP metadata as it stands now, whatever the source: the response's, the
    /// disk entry's, the one a `304` refreshed, or a stale entry's (stale-if-error). A processed
    /// variant stored on disk carries it (freshness, validators), so it is fresh exactly as long
    /// as its original. `nil` when the response forbade storing (`no-store`, or what a shared
    /// cache may not keep) or when nothing is known (a memory-data hit): then no variant is written.
    var metadata: CacheMetadata?
    var isRevalidated = false
    var isStale = false
    /// The write of these bytes to the disk cache, made once by the first stage above that has
    /// checked them (a decode, or a header read for a data request); `nil` when nothing to write.
    var store: DeferredStore?
    /// Whether the memory caches may keep these bytes and the images made from them: false for
    /// what a shared cache must not store (``HTTPCachePolicy/isShared``) and for `Vary: *`.
    var mayKeepInMemory = true
    /// The request headers the response varied by (its `Vary`, `nil` for none): the memory
    /// caches keep these bytes and their images under the key plus the values this request sent.
    var varyNames: [String]? = nil
    /// The memory budget's reservations for ``data`` (a body downloaded, or bytes read from disk):
    /// held as long as a copy of this value is (by the decoded image, a data response).
    var memoryHolds: [any AnyObject & Sendable] = []
    /// The bytes ``memoryHolds`` reserve.
    var heldBytes: Int { MemoryBudget.heldBytes(memoryHolds) }
    /// Whether a processed variant may go to disk: only with the original's metadata to carry.
    var mayStoreVariant: Bool { metadata != nil }
}

/// A disk write that waits until someone vouches for the bytes: nothing undecodable is cached.
final class DeferredStore: Sendable {
    let key: String
    let data: Data
    let metadata: CacheMetadata
    private let done = Atomic<Bool>(false)

    init(key: String, data: Data, metadata: CacheMetadata) {
        self.key = key
        self.data = data
        self.metadata = metadata
    }

    /// Claims the write; true for the first caller only.
    func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
