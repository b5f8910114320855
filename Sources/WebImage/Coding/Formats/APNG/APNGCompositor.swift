/// Composites decoded APNG frame regions onto the canvas with the frame's blend operation, and
/// disposes of them afterwards, in premultiplied RGBA8 (see ``Image``).
///
/// *source* replaces the region; *over* draws it over the canvas (`out = src + dst · (1 − αsrc)`,
/// rounded exactly like ``PixelOperations``' premultiply). Disposal *background* clears the
/// region to transparent black, *previous* restores what the region held before the frame
/// (on the first frame it counts as *background*, as the specification says).
///
/// Each frame's canvas is a new buffer, since the frames handed out keep theirs. A frame that
/// replaces the whole canvas (*source* over every pixel) is decoded straight into that buffer,
/// neither copied from the previous canvas nor through a region buffer; any other is decoded into
/// a region buffer kept between frames and drawn onto a copy of the canvas.
struct APNGCompositor {
    let width: Int, height: Int
    /// Empty until the first frame is drawn.
    private(set) var canvas: [UInt8] = []
    /// `true` when every canvas pixel is known to be opaque, tracked from the regions' alpha as
    /// they are drawn and disposed; `false` does not mean some pixel is not (scan to know).
    private(set) var isOpaque = false
    private var region: [UInt8] = []
    private var saved: (rows: [UInt8], isOpaque: Bool)?
    private var pending: (frame: APNGAnimation.Frame, dispose: APNGAnimation.DisposeOp)?

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Applies the previous frame's disposal, then draws the frame whose straight RGBA8 pixels
    /// `decode` writes (every byte of the `4 · frame.width · frame.height` it is given).
    /// Afterwards ``canvas`` shows the frame. When `decode` throws, nothing changes.
    mutating func draw(
        _ frame: APNGAnimation.Frame, isFirst: Bool,
        decode: (UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Void
    ) throws(ImageDecodingError) {
        let dispose = isFirst && frame.dispose == .previous ? .background : frame.dispose
        let covers = frame.x == 0 && frame.y == 0 && frame.width == width && frame.height == height
        if covers, frame.blend == .source, dispose != .previous {
            // What the previous frame's disposal would leave is all overwritten.
            (canvas, isOpaque) = try Self.decoded(count: width * height * 4, decode)
            saved = nil
        } else {
            let regionIsOpaque = try decodeRegion(frame, decode)
            disposePending()
            if canvas.isEmpty { canvas = [UInt8](repeating: 0, count: width * height * 4) }
            if dispose == .previous { saved = (rows(of: frame), isOpaque) }
            blend(frame)
            // Over an opaque canvas, *over* leaves every alpha at 255 (α + 255 · (1 − α) rounds to 255).
            isOpaque = frame.blend == .source
                ? regionIsOpaque && (covers || isOpaque)
                : isOpaque || (covers && regionIsOpaque)
        }
        pending = (frame, dispose)
    }

    /// A new buffer of `count` bytes that `decode` fills, premultiplied, and whether it is opaque.
    private static func decoded(
        count: Int, _ decode: (UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Void
    ) throws(ImageDecodingError) -> ([UInt8], Bool) {
        var failure: ImageDecodingError?
        var opaque = false
        // Not zeroed first: a successful decode writes every byte, a failure drops the buffer.
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            do throws(ImageDecodingError) {
                try decode(raw)
                opaque = try PixelOperations.premultiplyStoppable(raw)
            } catch {
                failure = error
            }
            initialized = count
        }
        if let failure { throw failure }
        return (pixels, opaque)
    }

    /// Decodes the frame into ``region`` (its first `4 · width · height` bytes), premultiplied;
    /// whether the region is opaque.
    private mutating func decodeRegion(
        _ frame: APNGAnimation.Frame, _ decode: (UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Void
    ) throws(ImageDecodingError) -> Bool {
        let count = frame.width * frame.height * 4
        // Not zeroed: `decode` writes every byte of the part it is given.
        // Grown by doubling (at most to the canvas): regions that grow a little each frame do
        // not each make a new allocation.
        if region.count < count {
            let size = max(count, min(width * height * 4, region.count * 2))
            region = [UInt8](unsafeUninitializedCapacity: size) { _, initialized in initialized = size }
        }
        let result = region.withUnsafeMutableBytes { all -> Result<Bool, ImageDecodingError> in
            let raw = UnsafeMutableRawBufferPointer(rebasing: all[0..<count])
            do throws(ImageDecodingError) {
                try decode(raw)
                return .success(try PixelOperations.premultiplyStoppable(raw))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func blend(_ frame: APNGAnimation.Frame) {
        region.withUnsafeBufferPointer { src in
            canvas.withUnsafeMutableBufferPointer { dst in
                for row in 0..<frame.height {
                    let s = row * frame.width * 4, d = ((frame.y + row) * width + frame.x) * 4
                    if frame.blend == .source {
                        UnsafeMutableRawPointer(dst.baseAddress! + d).copyMemory(from: src.baseAddress! + s, byteCount: frame.width * 4)
                        continue
                    }
                    for i in 0..<frame.width {
                        let p = s + i * 4, q = d + i * 4
                        let alpha = UInt32(src[p + 3])
                        if alpha == 255 {
                            dst[q] = src[p]; dst[q + 1] = src[p + 1]; dst[q + 2] = src[p + 2]; dst[q + 3] = 255
                        } else if alpha != 0 {
                            let keep = 255 - alpha
                            for c in 0..<4 {
                                let t = UInt32(dst[q + c]) * keep + 128
                                dst[q + c] = UInt8(min(255, UInt32(src[p + c]) + ((t + (t >> 8)) >> 8)))
                            }
                        }
                    }
                }
            }
        }
    }

    private mutating func disposePending() {
        guard let (frame, dispose) = pending else { return }
        pending = nil
        switch dispose {
        case .none: break
        case .background:
            for row in 0..<frame.height {
                let d = ((frame.y + row) * width + frame.x) * 4
                canvas.replaceSubrange(d..<(d + frame.width * 4), with: repeatElement(0, count: frame.width * 4))
            }
            isOpaque = false
        case .previous:
            guard let saved else { return }
            for row in 0..<frame.height {
                let d = ((frame.y + row) * width + frame.x) * 4, s = row * frame.width * 4
                canvas.replaceSubrange(d..<(d + frame.width * 4), with: saved.rows[s..<(s + frame.width * 4)])
            }
            isOpaque = saved.isOpaque
            self.saved = nil
        }
    }

    /// A copy of the canvas under the frame's region.
    private func rows(of frame: APNGAnimation.Frame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(frame.width * frame.height * 4)
        for row in 0..<frame.height {
            let d = ((frame.y + row) * width + frame.x) * 4
            out.append(contentsOf: canvas[d..<(d + frame.width * 4)])
        }
        return out
    }
}
