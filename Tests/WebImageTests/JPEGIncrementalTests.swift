import Foundation
import Testing
import WebImage
import WebImageOrigin

/// ``JPEGIncrementalDecoder``: libjpeg with a suspending source, kept for a whole download.
@Suite("Incremental JPEG: libjpeg suspended between chunks", .cpuBound)
struct JPEGIncrementalTests {
    static let source = SampleImages.pattern(width: 301, height: 219, seed: 8)

    /// Feeds `data` in `chunkSize` pieces; returns the partial image after every chunk (after
    /// every 97th and the last for one-byte chunks, which suspend libjpeg everywhere).
    static func partials(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .default) throws -> [Image?] {
        let incremental = try #require(JPEGCoder().makeIncrementalDecoder(for: .jpeg, options: options))
        return stride(from: 0, to: data.count, by: chunkSize).compactMap { start -> Image?? in
            incremental.append(data[start..<min(start + chunkSize, data.count)])
            guard chunkSize > 1 || start % 97 == 0 || start + chunkSize >= data.count else { return nil }
            return .some(incremental.partialImage())
        }
    }

    @Test(arguments: [1, 333, 4096])
    func baselineRowsAreFinalAsTheyArriveAndTheEndIsTheFullDecode(chunkSize: Int) throws {
        let data = try JPEGCoder().encode(Self.source, as: .jpeg, quality: 0.9)
        let full = try JPEGCoder().decode(data, options: .default)
        let rowBytes = full.pixelWidth * 4
        var shownRows: [Int] = []
        for partial in try Self.partials(data, chunkSize: chunkSize) {
            guard let partial else { continue }
            // A prefix of rows equal to the full decode's; every row below it still empty.
            var rows = 0
            while rows < full.pixelHeight, partial.pixels[rows * rowBytes..<(rows + 1) * rowBytes] == full.pixels[rows * rowBytes..<(rows + 1) * rowBytes] { rows += 1 }
            #expect(partial.pixels[(rows * rowBytes)...].allSatisfy { $0 == 0 }, "rows below \(rows) not empty")
            #expect(partial.isOpaque == (rows == full.pixelHeight))
            shownRows.append(rows)
        }
        #expect(shownRows.count > 2 && shownRows == shownRows.sorted() && shownRows.last == full.pixelHeight)
    }

    @Test(arguments: [1, 500, 4096])
    func progressiveScansSharpenTheWholePictureAndTheEndIsTheFullDecode(chunkSize: Int) throws {
        let data = try JPEGCoder(progressive: true).encode(Self.source, as: .jpeg, quality: 0.9)
        let full = try JPEGCoder().decode(data, options: .default)
        let shown = try Self.partials(data, chunkSize: chunkSize).compactMap { $0 }
        var distinct: [Image] = []
        for image in shown where distinct.last?.pixels != image.pixels { distinct.append(image) }
        // Several scans shown before the last, each a whole opaque picture.
        try #require(distinct.count >= 3, "\(distinct.count) distinct partial images")
        #expect(distinct.allSatisfy { $0.isOpaque && $0.pixelWidth == 301 && $0.pixelHeight == 219 })
        #expect(psnr(distinct[0], Self.source) < psnr(full, Self.source))
        #expect(distinct.last?.pixels == full.pixels)
    }

    @Test func theDownloadPathUsesItThroughTheRegistry() throws {
        let data = try JPEGCoder(progressive: true).encode(Self.source, as: .jpeg, quality: 0.9)
        var progressive = ProgressiveDecoder(decoder: ImageCoderRegistry.default, minimumInterval: .zero)
        var previews = 0
        for end in stride(from: 1000, to: data.count, by: 1000) where progressive.update(with: Data(data.prefix(end))) != nil {
            previews += 1
        }
        let last = progressive.update(with: data)
        let full = try JPEGCoder().decode(data, options: .default)
        #expect(previews > 2 && last?.pixels == full.pixels)
    }

    @Test func overTheLimitCorruptOrThumbnail() throws {
        let data = try JPEGCoder().encode(Self.source, as: .jpeg, quality: 0.9)
        #expect(try Self.partials(data, chunkSize: 2048, options: .init(maxPixelCount: 301 * 219 - 1)).allSatisfy { $0 == nil })
        var corrupt = data
        for i in stride(from: 2, to: 400, by: 1) { corrupt[i] = 0xFF }  // markers destroyed
        #expect(try Self.partials(corrupt, chunkSize: 512).allSatisfy { $0 == nil })
        let thumbnail = try #require(try Self.partials(data, chunkSize: 2048, options: .init(thumbnailMaxPixelSize: 100)).last ?? nil)
        #expect(thumbnail.pixelWidth == 100 && thumbnail.pixelHeight == 73)
    }
}
