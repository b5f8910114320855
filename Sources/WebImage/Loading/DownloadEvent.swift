public import Foundation

/// What happens to downloads, as an `AsyncSequence` from ``ImageDownloader/events()``
/// (SDWebImage posts these as notifications).
///
/// ```swift
/// Task { for await event in downloader.events() { log(event) } }
/// ```
public enum DownloadEvent: Sendable {
    case started(URL)
    case responseReceived(URL, DataResponse)
    case progress(URL, received: Int, expected: Int?)
    case finished(URL, bytes: Int)
    case failed(URL, ImageDownloadError)
    case cancelled(URL)
}
