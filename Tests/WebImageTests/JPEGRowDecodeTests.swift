import CTurboJPEG
import Foundation
import Testing
@testable import WebImage
import WebImageOrigin

/// JPEG stills are decoded a batch of rows at a time through libjpeg's scanline API (so that a
/// cancel can stop them): the pixels, the warnings and the errors are those of TurboJPEG's
/// one-call `tjDecompress2`, which decoded them before, at full size and at every DCT scale.
@Suite("JPEG decoded row by row", .cpuBound)
struct JPEGRowDecodeTests {
    /// What one decode gave: the pixels, and the problem libjpeg reported (nil when clean).
    struct Outcome: Equatable {
        var pixels: [UInt8]
        var warned: Bool?
        var message: String?
    }

    /// TurboJPEG's one-call decode at `scale` (the call JPEGCoder made before), into a zeroed
    /// buffer: RGBA, or CMYK for a CMYK or YCCK file.
    static func turboJPEG(_ data: Data, scale: (num: Int32, denom: Int32)) throws -> (Outcome, width: Int, height: Int, cmyk: Bool) {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, sampling: Int32 = 0, colorspace: Int32 = 0
        _ = data.withUnsafeBytes { tjDecompressHeader3(handle, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt($0.count), &width, &height, &sampling, &colorspace) }
        let w = (Int(width) * Int(scale.num) + Int(scale.denom) - 1) / Int(scale.denom)
        let h = (Int(height) * Int(scale.num) + Int(scale.denom) - 1) / Int(scale.denom)
        let cmyk = colorspace == TJCS_CMYK.rawValue || colorspace == TJCS_YCCK.rawValue
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        let result = data.withUnsafeBytes { src in
            pixels.withUnsafeMutableBufferPointer { dst in
                tjDecompress2(
                    handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count), dst.baseAddress,
                    Int32(w), Int32(w * 4), Int32(h), Int32((cmyk ? TJPF_CMYK : TJPF_RGBA).rawValue), TJFLAG_LIMITSCANS)
            }
        }
        let outcome = result == 0
            ? Outcome(pixels: pixels)
            : Outcome(pixels: pixels, warned: tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue), message: String(cString: tjGetErrorStr2(handle)))
        return (outcome, w, h, cmyk)
    }

    /// The row-by-row decode of the same file at the same scale, into a zeroed buffer.
    static func rows(_ data: Data, scale: (num: Int32, denom: Int32), width: Int, height: Int, cmyk: Bool) throws -> Outcome {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        let problem = try pixels.withUnsafeMutableBytes { dst in
            try JPEGCoder.decodeRows(data, into: dst, width: width, height: height, scale: scale, cmyk: cmyk)
        }
        return Outcome(pixels: pixels, warned: problem?.warned, message: problem?.message)
    }

    /// The files: the four kinds JPEGCoder writes, the unusual samplings and the damaged files
    /// browsers show anyway, and a larger photo-like one cut short (baseline and progressive).
    static func files() throws -> [(String, Data)] {
        var files = Fixtures.jpeg.map { ($0.name, $0.data) }
        for name in [
            "jpeg-sampling-chroma-over-luma", "jpeg-sampling-mixed", "lenient-jpeg-broken-exif", "lenient-jpeg-fill-bytes",
            "lenient-jpeg-junk", "lenient-jpeg-short-adobe", "lenient-jpeg-stuffed-ff00", "lenient-jpeg-truncated",
        ] {
            files.append((name, try CodecFixtures.data(name + ".jpg")))
        }
        let photo = SampleImages.pattern(width: 700, height: 500, seed: 11)
        for progressive in [false, true] {
            let jpeg = try JPEGCoder(progressive: progressive).encode(photo, as: .jpeg, quality: 0.85)
            files.append(("photo progressive=\(progressive)", jpeg))
            files.append(("photo progressive=\(progressive) cut at 60%", jpeg.prefix(jpeg.count * 6 / 10)))
        }
        return files
    }

    /// A small progressive JPEG whose last scan is repeated until the file has `scans` scans:
    /// each costs libjpeg a pass over the image, so more than 500 are refused.
    static func scanBomb(scans: Int) throws -> Data {
        let jpeg = [UInt8](try JPEGCoder(progressive: true).encode(SampleImages.pattern(width: 32, height: 32, seed: 2), as: .jpeg, quality: 0.8))
        let starts = (0..<jpeg.count - 1).filter { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xDA }
        let last = try #require(starts.last)
        let scan = jpeg[last..<jpeg.count - 2]  // the last SOS and its data, up to EOI
        return Data(jpeg[..<(jpeg.count - 2)] + Array(repeating: scan, count: scans - starts.count).joined() + [0xFF, 0xD9])
    }

    @Test func aScanBombIsRefused() throws {
        #expect(throws: ImageDecodingError.corrupt(format: .jpeg, reason: "Progressive JPEG image has more than 500 scans")) {
            try JPEGCoder().decode(Self.scanBomb(scans: 600), options: .default)
        }
        // 500 scans are still decoded.
        #expect(try JPEGCoder().decode(Self.scanBomb(scans: 500), options: .default).pixelWidth == 32)
    }

    @Test(arguments: [(Int32(1), Int32(1)), (1, 2), (3, 8), (1, 8)])
    func pixelsWarningsAndErrorsAreTurboJPEGs(num: Int32, denom: Int32) throws {
        var warned = 0, failed = 0
        for (name, data) in try Self.files() + [("600 scans", try Self.scanBomb(scans: 600))] {
            let (expected, width, height, cmyk) = try Self.turboJPEG(data, scale: (num, denom))
            let found = try Self.rows(data, scale: (num, denom), width: width, height: height, cmyk: cmyk)
            if expected.warned == true { warned += 1 }
            if expected.warned == false { failed += 1 }
            #expect(found.warned == expected.warned && found.message == expected.message, "\(name): \(String(describing: found.message))")
            #expect(found.pixels == expected.pixels, "\(name) at \(num)/\(denom)")
        }
        // The damaged files exercise libjpeg's warnings (junk, premature ends), not only clean decodes.
        #expect(warned >= 4, "\(warned) files warned, \(failed) failed")
    }

    /// Through the coder: the same image (CMYK converted as before, thumbnails from the same
    /// DCT-scaled decode) as TurboJPEG's decode gave.
    @Test func theCoderGivesWhatTurboJPEGGave() throws {
        for (name, data) in try Self.files() {
            for thumbnail in [nil, 100] as [Int?] {
                let options = ImageDecodingOptions(thumbnailMaxPixelSize: thumbnail)
                let image = try JPEGCoder().decode(data, options: options)
                let header = try JPEGCoder().readHeader(data)
                let target: (width: Int, height: Int) = thumbnail.map { Resampler.fittingSize(width: header.pixelWidth, height: header.pixelHeight, maxWidth: $0, maxHeight: $0) }
                    ?? (header.pixelWidth, header.pixelHeight)
                let (w, h) = JPEGCoder.scaledSize(header, atLeast: target)
                let scale = JPEGCoder.scalingFactor(header, fitting: (w, h))
                // A file libjpeg cannot finish (cut inside a marker segment) is decoded to its last whole scan.
                let whole = try Self.turboJPEG(data, scale: scale).0.warned == false ? JPEGCoder.completeScans(data) : data
                var (expected, width, height, cmyk) = try Self.turboJPEG(whole, scale: scale)
                if cmyk { JPEGCoder.convertCMYK(&expected.pixels, width: width, height: height, file: whole, handling: options.colorHandling) }
                let reference = Resampler.resize(
                    Image(format: .jpeg, pixelWidth: width, pixelHeight: height, pixels: expected.pixels, isOpaque: true),
                    width: target.width, height: target.height)
                #expect(image.pixelWidth == target.width && image.pixelHeight == target.height, "\(name)")
                #expect(image.pixels == reference.pixels, "\(name), thumbnail \(String(describing: thumbnail))")
            }
        }
    }

    /// Pillow, an independent reader (its own libjpeg-turbo build), decodes the same pixels.
    @Test func pillowDecodesTheSamePixels() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("jpeg-rows-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = SampleImages.pattern(width: 640, height: 480, seed: 3)
        let files: [(String, Data)] = [
            ("baseline", try JPEGCoder().encode(photo, as: .jpeg, quality: 0.9)),
            ("progressive", try JPEGCoder(progressive: true).encode(photo, as: .jpeg, quality: 0.9)),
            ("grayscale", try JPEGCoder(grayscale: true).encode(photo, as: .jpeg, quality: 0.9)),
        ]
        for (name, data) in files { try data.write(to: directory.appendingPathComponent(name + ".jpg")) }
        let script = """
            import sys
            from PIL import Image
            for path in sys.argv[1:]:
                with open(path + ".rgba", "wb") as out:
                    out.write(Image.open(path).convert("RGBA").tobytes())
            """
        let paths = files.map { directory.appendingPathComponent($0.0 + ".jpg").path }
        let result = try await WebImageCommand.run(["python3", "-c", script] + paths, program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(result.status == 0, "\(result.stderr)")
        for (name, data) in files {
            let pillow = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name + ".jpg.rgba")))
            let image = try JPEGCoder().decode(data, options: .default)
            #expect(pillow.count == image.pixels.count, "\(name)")
            let differing = zip(pillow, image.pixels).filter { $0 != $1 }.count
            #expect(differing == 0, "\(name): \(differing) bytes differ from Pillow's")
        }
    }
}
