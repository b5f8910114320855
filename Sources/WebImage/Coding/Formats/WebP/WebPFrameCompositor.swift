import Foundation

/// The canvas of an animated WebP, and the rules libwebp's `WebPAnimDecoder` (anim_decode.c)
/// composites frames by, so that frames decoded by ``WebPAnimationFrames`` are its pixels to the
/// byte (straight RGBA8):
/// - the canvas starts transparent (the `ANIM` background colour is ignored, as libwebp does);
/// - a *key frame* — the first; one covering the canvas that has no alpha or does not blend; or
///   any frame after one disposed to the background that covered the canvas or was itself a key
///   frame — starts from a transparent canvas and is written without blending;
/// - otherwise the frame starts from the previous canvas, disposed: a frame disposed to the
///   background leaves its rectangle transparent;
/// - a blending frame that is not a key frame is alpha-blended (non-premultiplied, libwebp's
///   integer formula) over the canvas, except where the previous frame was disposed to the
///   background: there it is written as decoded; a non-blending frame overwrites its rectangle.
///
/// Blending happens in the frame's own buffer, with a look at `Task.isCancelled` every row,
/// before anything is written: a cancel leaves the canvas as it was, ready for the same frame
/// again. A frame covering the canvas becomes the canvas (no copy), a key frame that does not
/// starts on a fresh zeroed one, and a frame's disposal waits for the next frame, so a frame
/// costs no copy of the canvas that a cancel could not stop; ``shown(premultiplied:)`` copies it
/// out in bands with a look between. Not `Sendable`: owned by one ``WebPAnimationFrames``.
final class WebPFrameCompositor {
    /// Where a frame goes and how; the rectangle lies inside the canvas (checked by the caller).
    struct Placement {
        var x: Int, y: Int, width: Int, height: Int
        var hasAlpha: Bool
        var blends: Bool
        var disposesToBackground: Bool

        func covers(width canvasWidth: Int, height canvasHeight: Int) -> Bool {
            width == canvasWidth && height == canvasHeight
        }
    }

    /// Bytes of RGBA8 from `malloc` (`calloc` when zeroed), freed with the object.
    final class Buffer {
        let bytes: UnsafeMutableRawBufferPointer

        init(byteCount: Int, zeroed: Bool) throws(ImageDecodingError) {
            guard let memory = zeroed ? calloc(max(byteCount, 1), 1) : malloc(max(byteCount, 1)) else {
                throw .corrupt(format: .webp, reason: "out of memory for \(byteCount) bytes of pixels")
            }
            bytes = UnsafeMutableRawBufferPointer(start: memory, count: byteCount)
        }

        deinit { free(bytes.baseAddress) }
    }

    let width: Int
    let height: Int
    /// `width × height × 4` bytes, from the first frame on.
    private var canvas: Buffer?
    /// The last frame composited, and whether it was a key frame.
    private var previous: (placement: Placement, wasKeyFrame: Bool)?
    /// The last frame's rectangle while it still waits to be cleared (disposal to background).
    private var pendingDisposal: Placement?

    /// `width × height` must have passed the pixel limit.
    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Back to the state before the first frame.
    func reset() {
        previous = nil
        pendingDisposal = nil
    }

    /// Composites `frame` (straight RGBA8 of `placement`'s size, blended in place; the
    /// compositor may keep it as its canvas). Throws `.cancelled` only before the canvas changes.
    func composite(_ frame: Buffer, at placement: Placement) throws(ImageDecodingError) {
        let keyFrame = isKeyFrame(placement)
        if !keyFrame, let canvas, let disposed = pendingDisposal {
            // The previous frame did not cover the canvas (or this would be a key frame).
            for row in 0..<disposed.height {
                memset(canvas.bytes.baseAddress! + ((disposed.y + row) * width + disposed.x) * 4, 0, disposed.width * 4)
            }
            pendingDisposal = nil
        }
        if !keyFrame, placement.blends, let previous, let canvas {
            try blend(frame, at: placement, over: canvas.bytes.baseAddress!, skipping: previous.placement.disposesToBackground ? previous.placement : nil)
        }
        // Nothing below throws but running out of memory: the canvas changes only here.
        if placement.covers(width: width, height: height) {
            canvas = frame
        } else {
            if keyFrame || canvas == nil { canvas = try Buffer(byteCount: width * height * 4, zeroed: true) }
            let target = canvas!.bytes.baseAddress!, rowBytes = placement.width * 4
            for row in 0..<placement.height {
                (target + ((placement.y + row) * width + placement.x) * 4).copyMemory(from: frame.bytes.baseAddress! + row * rowBytes, byteCount: rowBytes)
            }
        }
        previous = (placement, keyFrame)
        pendingDisposal = placement.disposesToBackground ? placement : nil
    }

    /// The canvas as the last frame composited shows it, premultiplied if asked, copied a band at
    /// a time; `.cancelled` between bands.
    func shown(premultiplied: Bool) throws(ImageDecodingError) -> [UInt8] {
        let count = width * height * 4
        guard let canvas else { return [UInt8](repeating: 0, count: count) }
        var cancelled = false
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let target = UnsafeMutableRawBufferPointer(buffer)
            for start in stride(from: 0, to: count, by: PixelOperations.band) {
                if Task.isCancelled {
                    cancelled = true
                    break
                }
                let end = min(count, start + PixelOperations.band)
                (target.baseAddress! + start).copyMemory(from: canvas.bytes.baseAddress! + start, byteCount: end - start)
                if premultiplied { _ = PixelOperations.premultiply(UnsafeMutableRawBufferPointer(rebasing: target[start..<end])) }
            }
            initialized = cancelled ? 0 : count
        }
        if cancelled { throw .cancelled }
        return pixels
    }

    /// libwebp's `IsKeyFrame`: whether the frame starts from a transparent canvas, unblended.
    private func isKeyFrame(_ frame: Placement) -> Bool {
        guard let previous else { return true }
        if (!frame.hasAlpha || !frame.blends) && frame.covers(width: width, height: height) { return true }
        return previous.placement.disposesToBackground
            && (previous.placement.covers(width: width, height: height) || previous.wasKeyFrame)
    }

    /// Blends every row of `frame` over the canvas below it, leaving out the part of each row
    /// inside `disposed` (the previous frame's rectangle, cleared to transparent: libwebp writes
    /// the frame's pixels there as decoded).
    private func blend(
        _ frame: Buffer, at placement: Placement, over canvas: UnsafeMutableRawPointer, skipping disposed: Placement?
    ) throws(ImageDecodingError) {
        let frameRight = placement.x + placement.width
        for row in 0..<placement.height {
            if Task.isCancelled { throw .cancelled }
            let y = placement.y + row
            var spans = [(placement.x, frameRight)]
            if let disposed, y >= disposed.y, y < disposed.y + disposed.height,
               placement.x < disposed.x + disposed.width, frameRight > disposed.x {
                spans = [(placement.x, min(frameRight, disposed.x)), (max(placement.x, disposed.x + disposed.width), frameRight)]
            }
            for (left, right) in spans where left < right {
                let source = frame.bytes.baseAddress! + (row * placement.width + left - placement.x) * 4
                let below = UnsafeRawPointer(canvas + (y * width + left) * 4)
                Self.blendRow(source.assumingMemoryBound(to: UInt8.self), over: below.assumingMemoryBound(to: UInt8.self), pixels: right - left)
            }
        }
    }

    /// libwebp's non-premultiplied blend (`BlendPixelNonPremult`) of `pixels` RGBA8 pixels of
    /// `source` over `below`, into `source`; opaque source pixels are left as they are.
    static func blendRow(_ source: UnsafeMutablePointer<UInt8>, over below: UnsafePointer<UInt8>, pixels: Int) {
        for i in 0..<pixels {
            let s = source + i * 4, d = below + i * 4
            let sourceAlpha = Int(s[3])
            if sourceAlpha == 255 { continue }
            if sourceAlpha == 0 {
                s.update(from: d, count: 4)
                continue
            }
            // The approximation libwebp uses for belowAlpha × (255 − sourceAlpha) / 255.
            let belowFactor = (Int(d[3]) * (256 - sourceAlpha)) >> 8
            let alpha = sourceAlpha + belowFactor  // < 256
            let scale = (1 << 24) / alpha
            for c in 0..<3 {
                s[c] = UInt8(truncatingIfNeeded: ((Int(s[c]) * sourceAlpha + Int(d[c]) * belowFactor) * scale) >> 24)
            }
            s[3] = UInt8(truncatingIfNeeded: alpha)
        }
    }
}
