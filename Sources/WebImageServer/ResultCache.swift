import Foundation
import WebImage

/// A rendered image and the headers that belong to it.
struct RenderedImage: Sendable {
    var data: Data
    var contentType: String
    var etag: String
    var expiresAt: Date
}

/// Rendered images by their full parameter set: memory (``MemoryDataCache``) in front of disk
/// (``DiskCache``), either optional. A disk hit is copied to memory.
final class ResultCache: Sendable {
    enum Layer: String, Sendable { case memory, disk }

    private let memory: MemoryDataCache?
    private let disk: DiskCache?

    init(memoryBytes: Int, directory: URL?) throws {
        memory = memoryBytes > 0 ? MemoryDataCache(costLimit: memoryBytes) : nil
        disk = try directory.map { try DiskCache(directory: $0) }
    }

    var isEnabled: Bool { memory != nil || disk != nil }

    func image(for key: String, now: Date = .now) async -> (RenderedImage, Layer)? {
        if let framed = memory?[key], let image = Self.unframe(framed), image.expiresAt > now { return (image, .memory) }
        guard let disk, let entry = disk.entry(for: key), let etag = entry.metadata.etag,
              let type = entry.metadata.contentType, let expiry = entry.metadata.expiresAt, expiry > now
        else { return nil }
        let image = RenderedImage(data: entry.data, contentType: type, etag: etag, expiresAt: expiry)
        memory?[key] = Self.frame(image)
        return (image, .disk)
    }

    func store(_ image: RenderedImage, for key: String) {
        memory?[key] = Self.frame(image)
        let metadata = CacheMetadata(contentType: image.contentType, byteCount: image.data.count, etag: image.etag, expiresAt: image.expiresAt)
        try? disk?.store(image.data, metadata: metadata, for: key)
    }

    /// The memory layer holds bytes only: `etag \n type \n expiry \n` in front of the image.
    private static func frame(_ image: RenderedImage) -> Data {
        Data("\(image.etag)\n\(image.contentType)\n\(Int(image.expiresAt.timeIntervalSince1970))\n".utf8) + image.data
    }

    private static func unframe(_ framed: Data) -> RenderedImage? {
        var lines: [String] = []
        var start = framed.startIndex
        while lines.count < 3 {
            guard let newline = framed[start...].firstIndex(of: 0x0A) else { return nil }
            lines.append(String(decoding: framed[start..<newline], as: UTF8.self))
            start = framed.index(after: newline)
        }
        guard let seconds = Double(lines[2]) else { return nil }
        return RenderedImage(data: framed[start...], contentType: lines[1], etag: lines[0], expiresAt: Date(timeIntervalSince1970: seconds))
    }
}
