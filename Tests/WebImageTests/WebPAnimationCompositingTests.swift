import CWebP
import Foundation
import Testing
import WebImageOrigin
@testable import WebImage

/// Animated WebP frames are decoded in pieces and composited by ``WebPFrameCompositor``, no
/// longer by libwebp's `WebPAnimDecoder` (issue 25: one uninterruptible call per frame). Every
/// frame must still be what `WebPAnimDecoder` gives, to the byte, for every animated WebP the
/// tests use: libwebp's encoder's choices (sub-frames, blending, disposal) and files made with
/// the mux API to reach every rule (key frames of each kind, blending after either disposal,
/// offsets, lossy with `ALPH`, lossless, opaque lossy).
@Suite("Animated WebP: frames composited as WebPAnimDecoder does", .cpuBound)
struct WebPAnimationCompositingTests {
    typealias Frame = WebPAnimationFixtures.Frame

    /// On a 64 × 48 canvas, a frame per rule of anim_decode.c (which frame is a key frame is in
    /// the comment).
    static let rules: [Frame] = [
        Frame(width: 64, height: 48, coding: .lossyAlpha, seed: 1),  // key: the first
        Frame(x: 10, y: 8, width: 20, height: 16, coding: .lossless, disposesToBackground: true, seed: 2),  // blends over all
        Frame(x: 4, y: 6, width: 30, height: 20, coding: .lossy, blends: false, seed: 3),  // overwrites
        Frame(x: 2, y: 2, width: 40, height: 30, coding: .lossless, disposesToBackground: true, seed: 4),
        Frame(x: 20, y: 10, width: 24, height: 24, coding: .lossyAlpha, seed: 5),  // blends outside frame 3's cleared rectangle
        Frame(width: 64, height: 48, coding: .lossless, disposesToBackground: true, seed: 6),  // full but blending: not key
        Frame(x: 8, y: 8, width: 16, height: 16, coding: .lossyAlpha, disposesToBackground: true, seed: 7),  // key: after a full disposed frame
        Frame(x: 30, y: 20, width: 16, height: 16, coding: .lossless, seed: 8),  // key: after a disposed key frame
        Frame(x: 0, y: 0, width: 10, height: 10, coding: .lossless, seed: 9),  // blends (transparent pixels keep the canvas)
        Frame(width: 64, height: 48, coding: .lossy, seed: 10),  // key: opaque and full
        Frame(x: 12, y: 4, width: 50, height: 44, coding: .lossyAlpha, seed: 11),
        Frame(width: 64, height: 48, coding: .lossless, blends: false, duration: 0, seed: 12),  // key: full, not blending
        Frame(x: 62, y: 46, width: 2, height: 2, coding: .lossless, disposesToBackground: true, duration: 0xFF_FFFF, seed: 13),
        Frame(x: 40, y: 0, width: 24, height: 48, coding: .lossyAlpha, blends: false, seed: 14),
    ]

    /// Every animated WebP of the tests, by name, and stills (an animation of one frame).
    static func fixtures() throws -> [(name: String, data: Data)] {
        let translucent = SampleImages.animation(width: 40, height: 30, count: 5, alpha: true)
        return [
            ("rules.webp", WebPAnimationFixtures.animation(width: 64, height: 48, rules)),
            ("rules-reversed.webp", WebPAnimationFixtures.animation(width: 64, height: 48, loopCount: 0, Array(rules.reversed()))),
            ("lossless.webp", try SampleImages.animatedWebP(width: 40, height: 30, count: 5)),
            ("wide.webp", try SampleImages.animatedWebP(width: 400, height: 100, count: 3)),
            ("lossy-alpha.webp", try WebPCoder().encode(translucent, as: .webp, quality: 0.7)),
            ("lossy.webp", try WebPCoder().encode(SampleImages.animation(width: 48, height: 32, count: 4), as: .webp, quality: 0.5)),
            ("longest-delays.webp", try ExtremeWebP.longAnimation(frames: 6)),
            ("still-lossy.webp", try SampleImages.webp(width: 33, height: 17, seed: 3)),
            ("still-lossy-alpha.webp", try SampleImages.webp(width: 33, height: 17, seed: 4, alpha: true)),
            ("still-lossless.webp", try SampleImages.webp(width: 33, height: 17, seed: 5, alpha: true, quality: 1)),
        ]
    }

    @Test func everyFrameIsWebPAnimDecodersToTheByte() throws {
        for (name, data) in try Self.fixtures() {
            #expect(!data.isEmpty, "\(name) was not made")
            let expected = try #require(WebPAnimationFixtures.reference(data), "\(name): libwebp refuses it")
            let decoded = try WebPAnimationFixtures.decoded(data)
            #expect(decoded.width == expected.width && decoded.height == expected.height, "\(name)")
            #expect(decoded.loopCount == expected.loopCount, "\(name)")
            #expect(decoded.frames.count == expected.frames.count && !decoded.frames.isEmpty, "\(name)")
            for (index, (frame, reference)) in zip(decoded.frames, expected.frames).enumerated() {
                #expect(frame.rgba == reference.rgba, "\(name) frame \(index)")
                #expect(frame.milliseconds == reference.milliseconds, "\(name) frame \(index)")
            }
        }
    }

    /// The public entry points give the same frames, premultiplied: the full decode of an
    /// animation, and ``WebPAnimationDecoder`` (stills too), in order and after a rewind.
    @Test func theDecodersGiveThoseFramesPremultiplied() throws {
        for (name, data) in try Self.fixtures() {
            let expected = try #require(WebPAnimationFixtures.reference(data), "\(name)")
            let premultiplied = expected.frames.map { frame in
                var rgba = frame.rgba
                _ = PixelOperations.premultiply(&rgba)
                return rgba
            }
            let lazy = try WebPAnimationDecoder(data)
            #expect(lazy.frameCount == premultiplied.count, "\(name)")
            for index in Array(premultiplied.indices) + [0, premultiplied.count - 1] {
                #expect(try lazy.frame(at: index).pixels == premultiplied[index], "\(name) frame \(index)")
            }
            guard premultiplied.count > 1 else { continue }
            let full = try WebPCoder().decode(data, options: .default)
            #expect(full.frames.map(\.pixels) == premultiplied, "\(name)")
            #expect(full.frames.map(\.duration) == expected.frames.map { ImageFrame.clampedDuration(milliseconds: $0.milliseconds) }, "\(name)")
        }
    }

    /// The rules file holds what it is meant to: offsets, both disposals, both blend methods,
    /// lossy frames with and without `ALPH` and lossless ones (read back with the demuxer).
    @Test func theRulesFileReachesEveryRule() throws {
        let data = WebPAnimationFixtures.animation(width: 64, height: 48, Self.rules)
        var seen = Set<String>()
        try data.withUnsafeBytes { bytes in
            var input = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            let demuxer = try #require(WebPDemux(&input))
            defer { WebPDemuxDelete(demuxer) }
            var iterator = WebPIterator()
            #expect(WebPDemuxGetFrame(demuxer, 1, &iterator) != 0)
            defer { WebPDemuxReleaseIterator(&iterator) }
            repeat {
                let tag = String(decoding: UnsafeRawBufferPointer(start: iterator.fragment.bytes, count: 4), as: UTF8.self)
                seen.insert(tag)
                if iterator.x_offset > 0 && iterator.y_offset > 0 { seen.insert("offset") }
                seen.insert(iterator.dispose_method == WEBP_MUX_DISPOSE_BACKGROUND ? "dispose" : "keep")
                seen.insert(iterator.blend_method == WEBP_MUX_BLEND ? "blend" : "no-blend")
            } while WebPDemuxNextFrame(&iterator) != 0
        }
        #expect(seen == ["ALPH", "VP8 ", "VP8L", "offset", "dispose", "keep", "blend", "no-blend"])
    }

    /// Blending is libwebp's integer formula: a few pixels worked by hand.
    @Test func blendingIsLibwebpsIntegerFormula() {
        var source: [UInt8] = [200, 100, 50, 255, 10, 20, 30, 0, 200, 100, 50, 128, 255, 0, 0, 1]
        let below: [UInt8] = [1, 2, 3, 4, 90, 80, 70, 60, 0, 0, 255, 255, 0, 255, 0, 0]
        source.withUnsafeMutableBufferPointer { s in
            below.withUnsafeBufferPointer { WebPFrameCompositor.blendRow(s.baseAddress!, over: $0.baseAddress!, pixels: 4) }
        }
        // Opaque: kept. Transparent: the pixel below, whole. 128 over opaque: below's factor
        // (255 × 128) >> 8 = 127, alpha 255, scale 2²⁴ / 255 = 65793: (200·128 + 0·127)·65793 >> 24
        // = 100, (100·128)·65793 >> 24 = 50, (50·128 + 255·127)·65793 >> 24 = 152. 1 over
        // transparent: alpha 1, red (255·1)·2²⁴ >> 24 = 255.
        #expect(source == [200, 100, 50, 255, 90, 80, 70, 60, 100, 50, 152, 255, 255, 0, 0, 1])
    }
}
