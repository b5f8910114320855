import Foundation
import Metrics

/// Who hears of a prefetcher's progress: its two callbacks and its event streams. Fed by the
/// prefetcher's single delivery task, so everything arrives in the order it happened.
final class PrefetchObservers: Sendable {
    struct Callbacks {
        var finished: (@Sendable (URL, Result<ImageSource, ImagePipelineError>) -> Void)?
        var allDone: (@Sendable (ImagePrefetcher.Counts) -> Void)?
    }

    let callbacks = Locked(Callbacks())
    let broadcaster = EventBroadcaster<ImagePrefetcher.Event>()

    /// Runs the callback for `event` (outside the lock), then sends it to every stream.
    func deliver(_ event: ImagePrefetcher.Event) {
        let current = callbacks.withLock { $0 }
        switch event {
        case .finished(let url, let result): current.finished?(url, result)
        case .allDone(let counts): current.allDone?(counts)
        }
        broadcaster.send(event)
    }

    /// Ends every stream (the prefetcher is gone).
    func finish() { broadcaster.finish() }
}

/// The prefetcher's swift-metrics counters: prefetches ended, by result.
enum PrefetchMetrics {
    private static let finished = Counter(label: "webimage_prefetch_total", dimensions: [("result", "finished")])
    private static let skipped = Counter(label: "webimage_prefetch_total", dimensions: [("result", "skipped")])
    private static let cancelled = Counter(label: "webimage_prefetch_total", dimensions: [("result", "cancelled")])

    static func record(_ result: Result<ImageSource, ImagePipelineError>) {
        switch result {
        case .success: finished.increment()
        case .failure(.cancelled): cancelled.increment()
        case .failure: skipped.increment()
        }
    }
}
