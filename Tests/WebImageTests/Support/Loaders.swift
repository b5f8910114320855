import Foundation
import Testing
import WebImage
import WebImageURLSession

/// The two `DataLoading` implementations; the downloader suites run against both.
enum LoaderKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case asyncHTTPClient, urlSession

    func make() -> any DataLoading {
        switch self {
        case .asyncHTTPClient: HTTPDataLoader()
        case .urlSession: URLSessionDataLoader()
        }
    }

    var testDescription: String { rawValue }

    /// A downloader over this loader, configured by `change`.
    func downloader(_ change: (inout ImageDownloaderConfiguration) -> Void = { _ in }) -> ImageDownloader {
        var configuration = ImageDownloaderConfiguration()
        configuration.retryPolicy = .none
        // 120 s, not the library's 15 s: when a full run starts, its hundreds of tests keep the
        // pool's two threads busy for up to a minute, and a download that started then timed out.
        // Tests of timeouts set their own.
        configuration.timeout = TestTime.scaled(.seconds(120))
        change(&configuration)
        return ImageDownloader(loader: make(), configuration: configuration)
    }
}

/// Polls `condition` until it holds or `timeout` (times the test time scale) passes; returns whether it held.
@discardableResult
func eventually(timeout: Duration = .seconds(15), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + TestTime.scaled(timeout)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// A thread-safe list, for values reported from callbacks.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

extension ImageDownloadError {
    var isCancelled: Bool { if case .cancelled = self { true } else { false } }
}

/// Runs `body` expecting an ``ImageDownloadError`` and returns it.
func downloadError(_ body: () async throws -> Void) async -> ImageDownloadError? {
    do {
        try await body()
        return nil
    } catch {
        return error as? ImageDownloadError
    }
}
