import Foundation
import Testing
import WebImage

@Suite("Format sniffing from the first bytes")
struct FormatSniffingTests {
    static let cases: [(String, [UInt8], ImageFormat?)] = [
        ("jpeg", [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], .jpeg),
        ("png", [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0], .png),
        ("gif87", Array("GIF87a".utf8) + [1, 0], .gif),
        ("gif89", Array("GIF89a".utf8) + [1, 0], .gif),
        ("webp", Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WEBPVP8 ".utf8), .webp),
        ("riff-not-webp", Array("RIFF".utf8) + [0x24, 0, 0, 0] + Array("WAVEfmt ".utf8), nil),
        ("tiff-le", [0x49, 0x49, 0x2A, 0x00, 8, 0], .tiff),
        ("tiff-be", [0x4D, 0x4D, 0x00, 0x2A, 0, 8], .tiff),
        ("bmp", Array("BM".utf8) + [0x36, 0, 0, 0], .bmp),
        ("ico", [0, 0, 1, 0, 1, 0, 16, 16], .ico),
        ("cur", [0, 0, 2, 0, 1, 0, 16, 16], .ico),
        ("avif", [0, 0, 0, 0x20] + Array("ftypavif".utf8) + [0, 0, 0, 0], .avif),
        ("avis", [0, 0, 0, 0x20] + Array("ftypavis".utf8) + [0, 0, 0, 0], .avif),
        ("heic", [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [0, 0, 0, 0], .heic),
        ("heix", [0, 0, 0, 0x18] + Array("ftypheix".utf8) + [0, 0, 0, 0], .heic),
        ("mif1", [0, 0, 0, 0x18] + Array("ftypmif1".utf8) + [0, 0, 0, 0], .heif),
        ("mp4-not-image", [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [0, 0, 0, 0], nil),
        ("jxl-codestream", [0xFF, 0x0A, 0xFA, 0x7F], .jpegXL),
        ("jxl-container", [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], .jpegXL),
        ("pdf", Array("%PDF-1.7\n".utf8), .pdf),
        ("svg", Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>".utf8), .svg),
        ("html", Array("<!doctype html><html><body>hi</body></html>".utf8), nil),
        ("text", Array("hello".utf8), nil),
        ("empty", [], nil),
        ("short-jpeg", [0xFF, 0xD8], nil),
        ("short-tag-after-space", Array("\n<G\n".utf8), nil),  // found by the fuzzer
        ("bom-svg", [0xEF, 0xBB, 0xBF] + Array("  <svg/>".utf8), .svg),
    ]

    @Test(arguments: cases.indices)
    func signature(_ index: Int) {
        let (name, bytes, expected) = Self.cases[index]
        #expect(ImageFormat(sniffing: Data(bytes)) == expected, "\(name)")
    }

    @Test func everyFormatHasMimeTypeAndExtension() {
        for format in ImageFormat.allCases {
            #expect(!format.mimeType.isEmpty)
            #expect(ImageFormat(fileExtension: format.fileExtension) == format)
        }
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg" && ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat(fileExtension: "JPEG") == .jpeg)
    }

    @Test func scaleFactorFromKey() {
        #expect(Image.scaleFactor(forKey: "https://a.com/icon@2x.png") == 2)
        #expect(Image.scaleFactor(forKey: "https://a.com/icon@3x.png?v=1") == 3)
        #expect(Image.scaleFactor(forKey: "https://a.com/icon.png") == 1)
        #expect(Image.scaleFactor(forKey: "https://a.com/a@2x/icon.png") == 1)
    }
}
