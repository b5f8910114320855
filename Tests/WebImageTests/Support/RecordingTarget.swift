import Foundation
import WebImage
import WebImageOrigin

/// An ``ImageTarget`` that records everything it is asked to display, in order.
@MainActor
final class RecordingTarget: ImageTarget {
    struct Entry: Equatable {
        var kind: String  // a presentation, "progress" or "failed"
        var key: String
        var width: Int?   // the displayed image's width names it in these tests
    }

    private(set) var entries: [Entry] = []
    private(set) var errors: [ImagePipelineError] = []

    func display(_ image: Image?, as presentation: ImagePresentation, forKey key: String) {
        entries.append(Entry(kind: presentation.rawValue, key: key, width: image?.pixelWidth))
    }

    func displayProgress(_ progress: DownloadProgress, forKey key: String) {
        entries.append(Entry(kind: "progress", key: key, width: nil))
    }

    func displayFailure(_ error: ImagePipelineError, forKey key: String) {
        errors.append(error)
        entries.append(Entry(kind: "failed", key: key, width: nil))
    }

    /// The kinds in order, runs of progress collapsed to one.
    func kinds(forKey key: String = ImageOperationKey.image) -> [String] {
        entries.filter { $0.key == key }.map(\.kind).reduce(into: []) { kinds, kind in
            if !(kind == "progress" && kinds.last == "progress") { kinds.append(kind) }
        }
    }

    func widths(_ kind: String, forKey key: String = ImageOperationKey.image) -> [Int?] {
        entries.filter { $0.key == key && $0.kind == kind }.map(\.width)
    }
}

/// Polls `condition` on the main actor until it holds or `timeout` passes (generous: the full
/// suite runs on two busy cores).
@MainActor
func waitUntil(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + TestTime.scaled(timeout)
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// Solid-colour PNGs whose width names them: `w<N>.png` is N×N.
enum NamedSizes {
    static func files(_ widths: [Int]) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for width in widths {
            let pixels = [UInt8](repeating: UInt8(width % 256), count: width * width * 4).enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element }
            let image = Image(format: .png, pixelWidth: width, pixelHeight: width, pixels: pixels, isOpaque: true)
            files["w\(width).png"] = try PNGCoder().encode(image, as: .png, quality: 1)
        }
        return files
    }

    static func image(_ width: Int) -> Image {
        Image(format: .png, pixelWidth: width, pixelHeight: width, pixels: [UInt8](repeating: 255, count: width * width * 4), isOpaque: true)
    }
}

/// ``withOrigin(files:_:)`` for main-actor tests: `body` runs on the main actor.
@MainActor
func withOriginOnMainActor(files: [String: Data], _ body: @MainActor (ImageOrigin) async throws -> Void) async throws {
    let origin = try await ImageOrigin.start(files: files)
    do {
        try await body(origin)
        await origin.stop()
    } catch {
        await origin.stop()
        throw error
    }
}
