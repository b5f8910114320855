import Foundation
import WebImage
import WebImageOrigin

/// Starts a real origin on 127.0.0.1 for the duration of `body` and stops it afterwards.
func withOrigin<T>(
    files: [String: Data]? = nil, _ body: (ImageOrigin) async throws -> T
) async throws -> T {
    let origin = try await ImageOrigin.start(files: files ?? SampleFiles.standard)
    do {
        let result = try await body(origin)
        await origin.stop()
        return result
    } catch {
        await origin.stop()
        throw error
    }
}

/// The sample set, generated once per test process.
enum SampleFiles {
    static let standard: [String: Data] = (try? SampleImages.standardSet()) ?? [:]
}

/// A new empty directory under the system temporary directory.
func temporaryDirectory(_ name: String = #function) -> URL {
    let safe = name.filter { $0.isLetter || $0.isNumber }
    let url = URL(fileURLWithPath: NSTemporaryDirectory())
        .appendingPathComponent("webimage-tests-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A pipeline with a memory cache and a disk cache in `directory`.
func makePipeline(cacheDirectory: URL, memory: MemoryCache = MemoryCache()) throws -> ImagePipeline {
    ImagePipeline(configuration: .init(memoryCache: memory, dataCache: try DiskCache(directory: cacheDirectory)))
}
