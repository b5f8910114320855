import CPNGIncremental
import Foundation
import Testing
import WebImage
import WebImageOrigin

/// ``PNGIncrementalDecoder``: libpng's progressive reader, kept for a whole download. The prefix
/// decode (``PNGCoder/decodePartial(_:options:)``) is the same reader given the prefix at once,
/// so these tests check the state kept across chunks against it, the Adam7 block filling against
/// a model written here, and the end against libspng's full decode.
@Suite("Incremental PNG: libpng's progressive reader kept between chunks", .cpuBound)
struct PNGIncrementalTests {
    /// Every colour type: libspng-encoded (deflated, real IDAT chunking) and ``RawPNG`` ones.
    static let files: [(name: String, data: Data)] = [
        ("rgb", try! SampleImages.png(width: 97, height: 61, seed: 3, alpha: false)),
        ("rgba", try! SampleImages.png(width: 83, height: 45, seed: 4, alpha: true)),
        ("palette-trns", Fixtures.named("png-palette-trns").data),
        ("grey", Fixtures.named("png-grey").data),
        ("grey-16bit", grey16),
        ("rgb-16bit", Fixtures.named("png-16bit").data),
        ("grey-1bit-wide-trns", try! CodecFixtures.data("lenient-png-grey-trns-wide.png")),
        ("interlaced-rgba", Fixtures.named("png-interlaced").data),
        ("interlaced-palette-large", interlacedPalette),
        ("apng-default-image", try! SampleImages.animatedPNG(width: 40, height: 30)),  // fcTL/fdAT skipped
    ]

    /// 16-bit grey samples that are not v·257: how the depth is reduced shows.
    static let grey16 = RawPNG(width: 37, height: 29, bitDepth: 16, colorType: 0) { x, y in
        [UInt8((x * 7 + y) % 256), UInt8((x * 31 + y * 17) % 256)]
    }.encode()

    static let interlacedPalette = RawPNG(
        width: 61, height: 43, colorType: 3, interlaced: true, palette: Fixtures.paletteRGB, transparency: [0, 90, 180]
    ) { x, y in [UInt8((x / 3 + y / 2) % 16)] }.encode()

    @Test(arguments: [1, 97, 1024, 10_000])
    func everyChunkGivesThePrefixDecodesImageAndTheEndIsTheFullDecode(chunkSize: Int) throws {
        for (name, data) in Self.files {
            let incremental = try #require(PNGCoder().makeIncrementalDecoder(for: .png, options: .default))
            let full = try PNGCoder().decode(data, options: .default)
            var shown = 0
            // With one-byte chunks, about 60 prefixes a file are compared (each is decoded from scratch).
            let every = chunkSize == 1 ? max(61, data.count / 60) : 1
            for (step, end) in stride(from: chunkSize, through: data.count + chunkSize - 1, by: chunkSize).enumerated() {
                incremental.append(data[(end - chunkSize)..<min(end, data.count)])
                guard step % every == 0 || end >= data.count else { continue }
                let prefix = Data(data.prefix(end))
                let stateless = PNGCoder().decodePartial(prefix, options: .default)
                let partial = incremental.partialImage()
                #expect(partial?.pixels == stateless?.pixels, "\(name): \(prefix.count) of \(data.count) bytes")
                #expect(partial?.isOpaque == stateless?.isOpaque, "\(name): \(prefix.count) of \(data.count) bytes")
                if let partial, !name.hasPrefix("interlaced") {
                    // A plain PNG: the full decode's top rows, every row below them empty.
                    let rowBytes = full.pixelWidth * 4
                    var rows = 0
                    while rows < full.pixelHeight, partial.pixels[rows * rowBytes..<(rows + 1) * rowBytes] == full.pixels[rows * rowBytes..<(rows + 1) * rowBytes] { rows += 1 }
                    #expect(partial.pixels[(rows * rowBytes)...].allSatisfy { $0 == 0 }, "\(name): rows below \(rows) not empty")
                }
                if partial != nil { shown += 1 }
            }
            #expect(shown > 0, "\(name)")
            let last = try #require(incremental.partialImage(), "\(name)")
            #expect(last.pixels == full.pixels && last.isOpaque == full.isOpaque, "\(name)")
            #expect(last.pixelWidth == full.pixelWidth && last.pixelHeight == full.pixelHeight, "\(name)")
        }
    }

    /// Interlaced partial images against a model of Adam7 block filling: each is the reference
    /// with the rows of the passes so far placed, every pixel across its block.
    @Test func interlacedPartialsFillAdam7BlocksPassByPass() throws {
        for fixture in [Fixtures.named("png-interlaced")] {
            let reference = fixture.reference, data = fixture.data
            let states = Adam7Model.states(of: reference)
            let incremental = PNGIncrementalDecoder()
            var reached: [Int] = []
            for end in stride(from: 64, through: data.count + 63, by: 64) {
                incremental.append(data[(end - 64)..<min(end, data.count)])
                guard let partial = incremental.partialImage() else { continue }
                let state = try #require(states.firstIndex(of: partial.pixels), "at \(end): no pass and row gives this image")
                reached.append(state)
            }
            #expect(reached == reached.sorted() && Set(reached).count > 5)
            #expect(reached.last == states.count - 1)
        }
    }

    @Test func corruptDataNeverCrashesAndStopsThePartials() throws {
        let data = Self.files[0].data
        let idat = try #require(data.range(of: Data("IDAT".utf8))).upperBound
        var flipped = data
        for i in stride(from: idat + 40, to: idat + 80, by: 3) { flipped[i] ^= 0x5A }
        var badHeader = data
        badHeader[29] ^= 0xFF  // IHDR's CRC
        let truncated = Data(data.prefix(data.count * 2 / 3))
        for (name, bytes, expectsEnd) in [("flipped", flipped, false), ("bad IHDR CRC", badHeader, false), ("truncated", truncated, true)] {
            for chunkSize in [1, 97, 1024] {
                let partials = Self.partials(bytes, chunkSize: chunkSize)
                // Once a partial is gone it stays gone; flipped or bad-CRC data ends without one.
                let firstShown = partials.firstIndex { $0 != nil } ?? partials.count
                let lastShown = partials.lastIndex { $0 != nil } ?? -1
                #expect(lastShown < firstShown || partials[firstShown...lastShown].allSatisfy { $0 != nil }, "\(name), \(chunkSize)")
                #expect((partials.last! != nil) == expectsEnd, "\(name), \(chunkSize)")
                #expect(partials.last!?.pixels == PNGCoder().decodePartial(bytes, options: .default)?.pixels, "\(name), \(chunkSize)")
            }
        }
        #expect(Self.partials(badHeader, chunkSize: 97).allSatisfy { $0 == nil })
        #expect(Self.partials(Data("\u{89}PNG\r\n\u{1A}\n".utf8) + Data(repeating: 0xA5, count: 3000), chunkSize: 100).allSatisfy { $0 == nil })
    }

    @Test func overThePixelLimitNoPartialAndNoCanvas() throws {
        let data = Self.files[0].data  // 97 × 61
        #expect(Self.partials(data, chunkSize: 512, options: .init(maxPixelCount: 97 * 61 - 1)).allSatisfy { $0 == nil })
        #expect(PNGCoder().decodePartial(data, options: .init(maxPixelCount: 97 * 61 - 1)) == nil)
        #expect(Self.partials(data, chunkSize: 512, options: .init(maxPixelCount: 97 * 61)).last! != nil)
        // The C side refuses from the header, before the canvas: a 20,000 × 20,000 claim (1.6 GB) too.
        let bombs: [(Data, UInt64)] = [
            (data, UInt64(97 * 61 - 1)), (PNGBomb.header(width: 20_000, height: 20_000), 50_000_000),
            (PNGBomb.header(width: 1 << 24, height: 1 << 24), .max),
        ]
        for (bytes, limit) in bombs {
            let decoder = try #require(wi_png_incremental_create(limit))
            defer { wi_png_incremental_destroy(decoder) }
            let status = bytes.withUnsafeBytes { wi_png_incremental_append(decoder, $0.baseAddress?.assumingMemoryBound(to: UInt8.self), $0.count) }
            #expect(status == WI_PNG_FAILED && wi_png_incremental_canvas(decoder) == nil && wi_png_incremental_rows(decoder) == 0)
        }
    }

    @Test func thumbnailAndScaleAsThePrefixDecode() throws {
        let data = Self.files[0].data
        let options = ImageDecodingOptions(scale: 2, thumbnailMaxPixelSize: 40)
        let incremental = PNGIncrementalDecoder(options: options)
        incremental.append(data.prefix(data.count / 2))
        let partial = try #require(incremental.partialImage())
        #expect(max(partial.pixelWidth, partial.pixelHeight) == 40 && partial.scale == 2)
        #expect(partial.pixels == PNGCoder().decodePartial(Data(data.prefix(data.count / 2)), options: options)?.pixels)
    }

    /// Feeds `data` in `chunkSize` pieces; the partial image after every chunk.
    static func partials(_ data: Data, chunkSize: Int, options: ImageDecodingOptions = .default) -> [Image?] {
        let incremental = PNGIncrementalDecoder(options: options)
        return stride(from: 0, to: data.count, by: chunkSize).map { start in
            incremental.append(data[start..<min(start + chunkSize, data.count)])
            return incremental.partialImage()
        }
    }
}

/// Adam7 progressive display, written independently of libpng: after a pass's row, each of its
/// pixels fills its block (8×8 in pass 1, down to 1×1 in pass 7).
enum Adam7Model {
    static let passes: [(x: Int, y: Int, dx: Int, dy: Int, width: Int, height: Int)] = [
        (0, 0, 8, 8, 8, 8), (4, 0, 8, 8, 4, 8), (0, 4, 4, 8, 4, 4), (2, 0, 4, 4, 2, 4), (0, 2, 2, 4, 2, 2), (1, 0, 2, 2, 1, 2), (0, 1, 1, 2, 1, 1),
    ]

    /// The canvas after each row of each pass, in decoding order.
    static func states(of reference: Image) -> [[UInt8]] {
        let width = reference.pixelWidth, height = reference.pixelHeight
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var states: [[UInt8]] = []
        for pass in passes where pass.x < width {
            for y in stride(from: pass.y, to: height, by: pass.dy) {
                for x in stride(from: pass.x, to: width, by: pass.dx) {
                    for by in y..<min(y + pass.height, height) {
                        for bx in x..<min(x + pass.width, width) {
                            for c in 0..<4 { canvas[(by * width + bx) * 4 + c] = reference.pixels[(y * width + x) * 4 + c] }
                        }
                    }
                }
                states.append(canvas)
            }
        }
        return states
    }
}
