public import Foundation

extension ImagePrefetcher {
    /// Where prefetched images end up.
    ///
    /// ```swift
    /// let warm = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)   // bytes only, no decode
    /// ```
    public enum Destination: Sendable, Hashable {
        /// Decoded and kept in the memory cache (the original bytes also go to disk), ready to
        /// show at once — through ``ImagePipeline/imageTask(with:)``.
        case memoryCache
        /// The original bytes only, in the disk cache, with no pixels decoded — through
        /// ``ImagePipeline/data(for:)``. Cheaper: for images that may be shown later.
        case diskCache
    }

    /// How a batch of prefetches went. A batch begins with the first request accepted while the
    /// prefetcher is idle and ends when nothing waits or loads; then
    /// `finished + skipped + cancelled == total`.
    ///
    /// ```swift
    /// prefetcher.onAllDone = { counts in print("\(counts.finished)/\(counts.total), \(counts.skipped) failed") }
    /// ```
    public struct Counts: Sendable, Hashable, Codable {
        /// Loaded, or already in the memory cache when asked.
        public var finished = 0
        /// Failed (not found, not an image, network error…).
        public var skipped = 0
        /// Stopped by ``ImagePrefetcher/stopPrefetching(_:)-([ImageRequest])`` or ``ImagePrefetcher/stopAll()``.
        public var cancelled = 0
        /// Accepted in this batch (a request already being prefetched is not counted again).
        public var total = 0

        /// Accepted and not ended yet.
        public var remaining: Int { total - finished - skipped - cancelled }

        public init(finished: Int = 0, skipped: Int = 0, cancelled: Int = 0, total: Int = 0) {
            self.finished = finished
            self.skipped = skipped
            self.cancelled = cancelled
            self.total = total
        }
    }

    /// What ``ImagePrefetcher/events()`` delivers, in order: one `finished` per accepted
    /// request, then `allDone` when the batch ends.
    ///
    /// ```swift
    /// for await event in prefetcher.events() {
    ///     if case .allDone(let counts) = event { print(counts.finished); break }
    /// }
    /// ```
    public enum Event: Sendable {
        /// One request ended: where the image was found, or why it was not (a stopped request
        /// ends with ``ImagePipelineError/cancelled``).
        case finished(URL, Result<ImageSource, ImagePipelineError>)
        /// Nothing waits or loads any more.
        case allDone(Counts)
    }
}
