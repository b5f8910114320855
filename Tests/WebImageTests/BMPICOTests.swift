import Foundation
import Testing
import WebImage

@Suite("BMP and ICO/CUR: entry choice, alpha rules, limits")
struct BMPICOTests {
    static func fixture(_ name: String) throws -> Data { try CoderFixtureTests.data(name) }

    /// A BMP file header and BITMAPINFOHEADER for `width × height` at `bits` (no palette).
    static func bmp(width: Int32, height: Int32, bits: UInt16, compression: UInt32 = 0, pixels: [UInt8]) -> Data {
        var out: [UInt8] = Array("BM".utf8)
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        le(UInt32(54 + pixels.count)); le(UInt32(0)); le(UInt32(54))
        le(UInt32(40)); le(width); le(height); le(UInt16(1)); le(bits); le(compression)
        le(UInt32(pixels.count)); le(Int32(2835)); le(Int32(2835)); le(UInt32(0)); le(UInt32(0))
        return Data(out + pixels)
    }

    @Test func sniffsBMPAndBothIconKinds() throws {
        #expect(ImageFormat(sniffing: try Self.fixture("bmp-24bit.bmp")) == .bmp)
        #expect(ImageFormat(sniffing: try Self.fixture("ico-4bit-mask.ico")) == .ico)
        #expect(ImageFormat(sniffing: try Self.fixture("cur-24bit-mask.cur")) == .ico)
        let header = try ImageCoderRegistry.default.readHeader(try Self.fixture("bmp-8bit-topdown.bmp"))
        #expect(header == ImageHeader(format: .bmp, pixelWidth: 13, pixelHeight: 9, hasAlpha: false))
    }

    @Test func thirtyTwoBitAlphaIsUsedUnlessEveryAlphaByteIsZero() throws {
        // 2 × 1, BGRA: a half-transparent red and an opaque blue.
        let translucent = try ImageCoderRegistry.default.decode(Self.bmp(width: 2, height: 1, bits: 32, pixels: [0, 0, 255, 128, 255, 0, 0, 255]))
        #expect(!translucent.isOpaque)
        #expect(translucent.pixel(x: 0, y: 0) == (128, 0, 0, 128) && translucent.pixel(x: 1, y: 0) == (0, 0, 255, 255))
        let padded = try ImageCoderRegistry.default.decode(Self.bmp(width: 2, height: 1, bits: 32, pixels: [0, 0, 255, 0, 255, 0, 0, 0]))
        #expect(padded.isOpaque && padded.pixel(x: 0, y: 0) == (255, 0, 0, 255))
    }

    @Test func lyingSizesAreRefusedBeforeAllocation() throws {
        let bomb = Self.bmp(width: 100_000, height: -100_000, bits: 24, pixels: [1, 2, 3, 4])
        #expect(throws: ImageDecodingError.tooManyPixels(width: 100_000, height: 100_000, frames: 1, limit: 50_000_000)) {
            try ImageCoderRegistry.default.decode(bomb)
        }
        // Under the limit but with the pixel data missing: refused, not read past the end.
        #expect(throws: ImageDecodingError.corrupt(format: .bmp, reason: "pixel data truncated")) {
            try ImageCoderRegistry.default.decode(Self.bmp(width: 1000, height: 1000, bits: 24, pixels: [1, 2, 3, 4]))
        }
        // An icon whose bitmap entry claims 30 000 × 30 000.
        var icon = [UInt8](try Self.fixture("ico-4bit-mask.ico"))
        let entry = 22
        icon.replaceSubrange((entry + 4)..<(entry + 12), with: [0x30, 0x75, 0, 0, 0x60, 0xEA, 0, 0])
        #expect(throws: ImageDecodingError.tooManyPixels(width: 30_000, height: 30_000, frames: 1, limit: 50_000_000)) {
            try ImageCoderRegistry.default.decode(Data(icon))
        }
    }

    @Test func unsupportedCompressionIsATypedError() throws {
        #expect(throws: ImageDecodingError.corrupt(format: .bmp, reason: "compression 4 not supported")) {
            try ImageCoderRegistry.default.decode(Self.bmp(width: 2, height: 2, bits: 24, compression: 4, pixels: [0xFF, 0xD8]))
        }
    }

    @Test func iconEntryIsTheLargestOrTheNearestToTheRequestedSize() throws {
        let icon = try Self.fixture("ico-png-and-bitmaps.ico")  // 16 (PNG), 24 (4-bit), 32 (24-bit)
        #expect(try ImageCoderRegistry.default.readHeader(icon).pixelWidth == 32)
        let largest = try ImageCoderRegistry.default.decode(icon)
        #expect(largest.pixelWidth == 32 && largest.format == .ico)
        let sixteen = try ImageCoderRegistry.default.decode(icon, options: ImageDecodingOptions(thumbnailMaxPixelSize: 16))
        #expect(sixteen.pixelWidth == 16 && sixteen.pixelHeight == 16)
        // Nothing is 40 or more: the largest, never enlarged.
        let forty = try ImageCoderRegistry.default.decode(icon, options: ImageDecodingOptions(thumbnailMaxPixelSize: 40))
        #expect(forty.pixelWidth == 32)
        // 12 is nearest to the 16 entry, which is shrunk to 12.
        let twelve = try ImageCoderRegistry.default.decode(icon, options: ImageDecodingOptions(thumbnailMaxPixelSize: 12))
        #expect(twelve.pixelWidth == 12)
    }

    @Test func andMaskMakesPixelsTransparent() throws {
        let cursor = try ImageCoderRegistry.default.decode(try Self.fixture("cur-24bit-mask.cur"))
        #expect(!cursor.isOpaque)
        #expect(cursor.pixel(x: 0, y: 0).a == 0 && cursor.pixel(x: 10, y: 10).a == 255)
    }
}

@Suite("Inputs the fuzz target found crashing, kept as regressions")
struct DecoderFuzzRegressionTests {
    /// File name → what went wrong before the fix.
    static let inputs = [
        "ico-entry-area-overflow.ico": "entries of 2³² − 1 px a side: width × height overflowed Int while picking the largest",
        "bmp-non-contiguous-mask.bmp": "a BITFIELDS mask with gaps: its channel maximum × 255 overflowed UInt32",
        // A leak, not a crash (LeakSanitizer in the fuzz build): libheif returned its nclx profile with an error.
        "heif-nclx-unknown-code.heic": "an nclx colour code libheif does not know: the profile it allocated was never freed",
    ]

    @Test(arguments: inputs.keys.sorted())
    func decodesOrFailsWithATypedError(_ name: String) throws {
        let data = try CoderFixtureTests.data("fuzz/" + name)
        do {
            let image = try ImageCoderRegistry.default.decode(data, options: ImageDecodingOptions(maxPixelCount: 4_000_000))
            #expect(image.pixels.count >= image.pixelWidth * image.pixelHeight * 4)
        } catch {
            #expect(!error.description.isEmpty, "\(Self.inputs[name]!)")
        }
        _ = try? ImageCoderRegistry.default.readHeader(data)
    }
}
