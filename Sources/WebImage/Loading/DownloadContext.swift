import Logging
import Metrics

/// Everything a ``DownloadOperation`` works with, captured when it starts.
struct DownloadContext: Sendable {
    let loader: any DataLoading
    let configuration: ImageDownloaderConfiguration
    let queue: DownloadQueue
    let registry: DownloadRegistry
    let cookies: CookieJar
    let resumables: ResumableDataStore
    let lookups: LookupCache
    let deadlines: DeadlineMonitor
    let events: EventBroadcaster<DownloadEvent>
    let logger: Logger
    let metrics: DownloaderMetrics
}

/// The downloader's swift-metrics instruments, made once per downloader.
struct DownloaderMetrics: Sendable {
    let started = Counter(label: "webimage_downloads_started_total")
    let succeeded = Counter(label: "webimage_downloads_succeeded_total")
    let bytes = Counter(label: "webimage_download_bytes_total")
    let retries = Counter(label: "webimage_download_retries_total")
    let lookupReuses = Counter(label: "webimage_lookup_reuses_total")
    let duration = Metrics.Timer(label: "webimage_download_duration_seconds")

    func failed(_ error: ImageDownloadError) {
        Counter(label: "webimage_downloads_failed_total", dimensions: [("reason", error.metricReason)]).increment()
    }
}
