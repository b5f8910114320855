import CWebP
import Foundation
@testable import WebImage

/// Animated WebPs with chosen frame rectangles, disposal and blending (libwebp's mux API, each
/// frame a still encoded by libwebp), and libwebp's own `WebPAnimDecoder` as the reference that
/// ``WebPAnimationFrames`` must equal to the byte.
enum WebPAnimationFixtures {
    /// One frame: where it goes, how it is coded, disposed and blended.
    struct Frame {
        enum Coding { case lossy, lossyAlpha, lossless }
        var x = 0, y = 0, width: Int, height: Int
        var coding: Coding
        var blends = true
        var disposesToBackground = false
        var duration = 70
        var seed: Int
    }

    /// A pattern of `width × height` straight RGBA: translucent (with fully transparent pixels of
    /// non-zero colour, and opaque ones) unless `opaque`.
    static func pattern(width: Int, height: Int, seed: Int, opaque: Bool) -> [UInt8] {
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                rgba[i] = UInt8(truncatingIfNeeded: x * 7 + seed * 40)
                rgba[i + 1] = UInt8(truncatingIfNeeded: y * 11 + seed * 13)
                rgba[i + 2] = UInt8(truncatingIfNeeded: (x + y) * 5 + seed * 29)
                let alphas: [UInt8] = [0, 255, 128, 30, 200, 255, 1, 90]
                rgba[i + 3] = opaque ? 255 : alphas[(x / 3 + y / 2 + seed) % alphas.count]
            }
        }
        return rgba
    }

    /// A still WebP file of `rgba` by libwebp's simple encoding API.
    static func still(_ rgba: [UInt8], width: Int, height: Int, lossless: Bool, quality: Float = 80) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        let size = rgba.withUnsafeBufferPointer { src in
            lossless ? WebPEncodeLosslessRGBA(src.baseAddress, Int32(width), Int32(height), Int32(width * 4), &output)
                : WebPEncodeRGBA(src.baseAddress, Int32(width), Int32(height), Int32(width * 4), quality, &output)
        }
        defer { WebPFree(output) }
        return output.map { Data(bytes: $0, count: size) } ?? Data()
    }

    /// An animation on a `width × height` canvas (with a green background colour, which
    /// decoders ignore) of `frames`, made with libwebp's mux API.
    static func animation(width: Int, height: Int, loopCount: Int32 = 3, _ frames: [Frame]) -> Data {
        let stills = frames.map { frame in
            still(pattern(width: frame.width, height: frame.height, seed: frame.seed, opaque: frame.coding == .lossy),
                  width: frame.width, height: frame.height, lossless: frame.coding == .lossless)
        }
        return animation(width: width, height: height, loopCount: loopCount, zip(frames, stills).map { ($0, $1) })
    }

    /// The same with each frame's still file given.
    static func animation(width: Int, height: Int, loopCount: Int32 = 3, _ frames: [(Frame, Data)]) -> Data {
        guard let mux = WebPMuxNew() else { return Data() }
        defer { WebPMuxDelete(mux) }
        for (frame, still) in frames {
            let pushed = still.withUnsafeBytes { bytes in
                var info = WebPMuxFrameInfo()
                info.bitstream = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
                info.x_offset = Int32(frame.x)
                info.y_offset = Int32(frame.y)
                info.duration = Int32(frame.duration)
                info.id = WEBP_CHUNK_ANMF
                info.dispose_method = frame.disposesToBackground ? WEBP_MUX_DISPOSE_BACKGROUND : WEBP_MUX_DISPOSE_NONE
                info.blend_method = frame.blends ? WEBP_MUX_BLEND : WEBP_MUX_NO_BLEND
                return WebPMuxPushFrame(mux, &info, 1)
            }
            guard pushed == WEBP_MUX_OK else { return Data() }
        }
        var params = WebPMuxAnimParams(bgcolor: 0xFF00_FF00, loop_count: loopCount)
        var output = WebPData()
        guard WebPMuxSetAnimationParams(mux, &params) == WEBP_MUX_OK,
              WebPMuxSetCanvasSize(mux, Int32(width), Int32(height)) == WEBP_MUX_OK,
              WebPMuxAssemble(mux, &output) == WEBP_MUX_OK else { return Data() }
        defer { WebPDataClear(&output) }
        return Data(bytes: output.bytes, count: output.size)
    }

    /// Every frame's canvas (straight RGBA8) and duration by libwebp's `WebPAnimDecoder`, with its
    /// canvas size and loop count; nil if libwebp refuses the file or a frame.
    static func reference(_ data: Data) -> (width: Int, height: Int, loopCount: Int, frames: [(rgba: [UInt8], milliseconds: Int)])? {
        data.withUnsafeBytes { bytes in
            var options = WebPAnimDecoderOptions()
            guard WebPAnimDecoderOptionsInit(&options) != 0 else { return nil }
            options.color_mode = MODE_RGBA
            var input = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
            guard let decoder = WebPAnimDecoderNew(&input, &options) else { return nil }
            defer { WebPAnimDecoderDelete(decoder) }
            var info = WebPAnimInfo()
            guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else { return nil }
            let count = Int(info.canvas_width) * Int(info.canvas_height) * 4
            var frames: [(rgba: [UInt8], milliseconds: Int)] = []
            var previous: Int32 = 0
            while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
                var buffer: UnsafeMutablePointer<UInt8>?
                var timestamp: Int32 = 0
                guard WebPAnimDecoderGetNext(decoder, &buffer, &timestamp) != 0, let buffer else { return nil }
                frames.append((Array(UnsafeBufferPointer(start: buffer, count: count)), Int(timestamp &- previous)))
                previous = timestamp
            }
            return (Int(info.canvas_width), Int(info.canvas_height), Int(info.loop_count), frames)
        }
    }

    /// Every frame's canvas and duration by ``WebPAnimationFrames`` (what the decoders use).
    static func decoded(_ data: Data) throws(ImageDecodingError) -> (width: Int, height: Int, loopCount: Int, frames: [(rgba: [UInt8], milliseconds: Int)]) {
        let frames = try WebPAnimationFrames(PinnedBytes(copying: data), options: .default)
        var canvases: [(rgba: [UInt8], milliseconds: Int)] = []
        while let canvas = try frames.nextCanvas() { canvases.append(canvas) }
        return (frames.canvasWidth, frames.canvasHeight, frames.loopCount, canvases)
    }
}
