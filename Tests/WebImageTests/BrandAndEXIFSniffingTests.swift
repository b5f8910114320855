import Foundation
import Testing
import WebImage

@Suite("HEIF compatible brands and EXIF in PNG and WebP")
struct BrandAndEXIFSniffingTests {
    /// An `ftyp` box: size, "ftyp", major brand, minor version, compatible brands.
    static func ftyp(major: String, compatible: [String]) -> Data {
        var box = Data()
        let size = 16 + 4 * compatible.count
        box.append(contentsOf: [0, 0, 0, UInt8(size)])
        box.append(contentsOf: Array("ftyp\(major)".utf8) + [0, 0, 0, 0])
        for brand in compatible { box.append(contentsOf: Array(brand.utf8)) }
        box.append(contentsOf: [0, 0, 0, 8] + Array("meta".utf8))  // the next box
        return box
    }

    @Test func compatibleBrandsNameTheFormat() {
        #expect(ImageFormat(sniffing: Self.ftyp(major: "mif1", compatible: ["mif1", "miaf", "avif"])) == .avif)
        #expect(ImageFormat(sniffing: Self.ftyp(major: "mif1", compatible: ["mif1", "heic"])) == .heic)
        #expect(ImageFormat(sniffing: Self.ftyp(major: "msf1", compatible: ["msf1", "avis"])) == .avif)
        #expect(ImageFormat(sniffing: Self.ftyp(major: "mif1", compatible: ["mif1", "miaf"])) == .heif)
        // The major brand wins when it names a format; brands past the box's end do not count.
        #expect(ImageFormat(sniffing: Self.ftyp(major: "heic", compatible: ["avif"])) == .heic)
        var cut = Self.ftyp(major: "mif1", compatible: ["mif1"])
        cut.append(contentsOf: Array("avif".utf8))
        #expect(ImageFormat(sniffing: cut) == .heif)
        #expect(ImageFormat(sniffing: Self.ftyp(major: "isom", compatible: ["isom", "mp41"])) == nil)
    }

    @Test func pngEXIfOrientationIsReported() throws {
        let data = try CodecFixtures.data("exif-orientation6.png")
        #expect(EXIFOrientation.read(fromPNG: data) == .right)
        #expect(try ImageCoderRegistry.default.decode(data).orientation == .right)
        #expect(EXIFOrientation.read(fromPNG: try CodecFixtures.data("lenient-png-clean.png")) == .up)
    }

    @Test func webpEXIFOrientationIsReported() throws {
        let data = try CodecFixtures.data("exif-orientation3.webp")
        #expect(EXIFOrientation.read(fromWebP: data) == .down)
        let image = try ImageCoderRegistry.default.decode(data)
        #expect(image.orientation == .down && !image.isOpaque)
        // Cut or damaged chunks give .up, never a trap.
        for length in stride(from: 0, to: data.count, by: 7) { _ = EXIFOrientation.read(fromWebP: data.prefix(length)) }
        #expect(EXIFOrientation.read(fromWebP: data.prefix(30)) == .up)
    }
}
