import Foundation
import Testing
import WebImage

/// A profile kept by decoding (``ColorHandling/keep``) travels into the encoded file — checked
/// by reading it back with WebImage and with Pillow — and formats without a place for it get
/// sRGB pixels instead.
@Suite("Colour management: kept profiles in encoded files")
struct ColorOutputTests {
    static func keptImage(_ name: String) throws -> Image {
        var options = ImageDecodingOptions.default
        options.colorHandling = .keep
        return try ImageCoderRegistry.default.decode(try ColorManagementTests.load(name), options: options)
    }

    static func reference(_ name: String) throws -> Image {
        try ImageCoderRegistry.default.decode(try ColorManagementTests.load("\(name).pillow.png"))
    }

    /// Each format's file, decoded again with conversion, shows the colours of the original.
    /// Bounds: lossless PNG as the decode itself (2); the lossy formats' 4:2:0 chroma blurs the
    /// 8-pixel saturated patches (measured 4.5 for WebP at 0.95), and AVIF's quantisation more.
    @Test(arguments: [(ImageFormat.png, 2.0), (.webp, 6.0), (.jpeg, 6.0), (.avif, 8.0)])
    func keptProfileIsEmbeddedAndHonoured(_ format: ImageFormat, _ bound: Double) throws {
        let kept = try Self.keptImage("prophoto.png")
        let encoded = try ImageCoderRegistry.default.encode(kept, as: format, quality: 0.95)
        let reloaded = try ImageCoderRegistry.default.decode(encoded)
        #expect(reloaded.sourceColorProfile == kept.colorProfile, "\(format): profile lost")
        let error = ColorManagementTests.meanError(reloaded, try Self.reference("prophoto.png"))
        #expect(error <= bound, "\(format): mean error \(error)")
    }

    /// A simple (lossy, opaque) WebP becomes an extended one to carry the profile.
    @Test func simpleWebPGainsAnExtendedHeader() throws {
        let kept = try Self.keptImage("adobe-rgb.jpg")
        let encoded = try ImageCoderRegistry.default.encode(kept, as: .webp, quality: 0.8)
        #expect(encoded[12..<16].elementsEqual(Array("VP8X".utf8)))
        let reloaded = try ImageCoderRegistry.default.decode(encoded)
        #expect(reloaded.sourceColorProfile?.description.contains("Adobe RGB") == true)
        #expect(reloaded.pixelWidth == 64 && reloaded.pixelHeight == 48)
    }

    /// GIF has no place for a profile: the pixels are converted to sRGB before encoding.
    @Test func formatsWithoutAProfileGetSRGBPixels() throws {
        let kept = try Self.keptImage("swapped-red-green.png")
        let gif = try ImageCoderRegistry.default.encode(kept, as: .gif)
        let reloaded = try ImageCoderRegistry.default.decode(gif)
        #expect(reloaded.sourceColorProfile == nil)
        let patch = reloaded.pixel(x: 2, y: 2)
        #expect(patch.g > 200 && patch.r < 60, "\(patch)")
    }

    /// A kept grey profile cannot describe the RGB samples the encoders write (PNG, JPEG and WebP
    /// call that invalid; Chromium ignores it and showed `gray.png` 52 levels off): such images
    /// are converted to sRGB and written untagged, as for formats without a profile.
    @Test func aKeptGreyProfileIsConvertedNotEmbedded() throws {
        for name in ["gray.png", "gray.jpg"] {
            let kept = try Self.keptImage(name)
            #expect(kept.colorProfile?.colorSpace == .gray, "\(name)")
            for format in [ImageFormat.png, .jpeg, .webp] {
                let reloaded = try ImageCoderRegistry.default.decode(try ImageCoderRegistry.default.encode(kept, as: format))
                #expect(reloaded.sourceColorProfile == nil, "\(name) as \(format)")
                let error = ColorManagementTests.meanError(reloaded, try Self.reference(name))
                #expect(error <= (format == .png ? 2 : 6), "\(name) as \(format): mean error \(error)")
            }
        }
    }

    /// Converted images (the default) are written untagged: sRGB needs no profile.
    @Test func convertedImagesAreWrittenUntagged() throws {
        let converted = try ImageCoderRegistry.default.decode(try ColorManagementTests.load("adobe-rgb.png"))
        for format in [ImageFormat.png, .jpeg, .webp] {
            let encoded = try ImageCoderRegistry.default.encode(converted, as: format)
            #expect(try ImageCoderRegistry.default.decode(encoded).sourceColorProfile == nil, "\(format)")
        }
    }

    /// Pillow, an independent reader, finds the same profile bytes in every file we wrote.
    @Test func pillowReadsTheEmbeddedProfile() async throws {
        let kept = try Self.keptImage("adobe-rgb.png")
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for format in [ImageFormat.png, .jpeg, .webp, .avif] {
            let url = directory.appendingPathComponent("kept.\(format.rawValue)")
            try ImageCoderRegistry.default.encode(kept, as: format, quality: 0.9).write(to: url)
            paths.append(url.path)
        }
        // The profile file the fixture was made with: Pillow must find exactly these bytes.
        let original = "/usr/share/color/icc/colord/AdobeRGB1998.icc"
        let script = """
            import sys
            from PIL import Image
            original = open(sys.argv[1], "rb").read()
            for path in sys.argv[2:]:
                kind = path.rsplit(".", 1)[1]
                try:
                    icc = Image.open(path).info.get("icc_profile")
                    print(kind, "same" if icc == original else ("none" if not icc else "different"))
                except Exception as error:
                    print(kind, "unreadable", type(error).__name__)
            """
        // The python3 on PATH: the one scripts/setup installs Pillow for.
        let result = try await WebImageCommand.run(["python3", "-c", script, original] + paths, program: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(kept.colorProfile?.data == (try Data(contentsOf: URL(fileURLWithPath: original))))
        for format in ["png", "jpeg", "webp"] {
            #expect(result.stdout.contains("\(format) same"), "Pillow on \(format): \(result.stdout)")
        }
        // Pillow reads AVIF only when built with libavif: checked when it can open the file.
        if !result.stdout.contains("avif unreadable") {
            #expect(result.stdout.contains("avif same"), "Pillow on avif: \(result.stdout)")
        }
    }
}
