/// Decodes a GIF's frames in order and composites each onto the canvas the way browsers do
/// (see ``GIFCoder``): the ``FrameSequencing`` of GIF, for the full decode and
/// ``GIFAnimationDecoder`` alike.
///
/// Damaged compressed data (a bad LZW code, data cut inside a frame) ends the animation after the
/// damaged frame's decoded rows, unless `strict`. A GIF frame may depend on every frame before
/// it, so a rewind goes back to the first frame.
struct GIFCompositor: FrameSequencing {
    private let bytes: PinnedBytes
    private let sizing: FrameSizing
    private let strict: Bool
    private var stream: GIFStream
    private var canvas: [UInt8]
    private(set) var position = 0
    /// What the decode forgave so far (``ImageRepairs/damagedData``).
    private(set) var repairs: ImageRepairs = []
    private var ended = false

    init(_ bytes: PinnedBytes, sizing: FrameSizing, strict: Bool) throws(ImageDecodingError) {
        self.bytes = bytes
        self.sizing = sizing
        self.strict = strict
        stream = try GIFStream(bytes)
        canvas = [UInt8](repeating: 0, count: sizing.width * sizing.height * 4)
    }

    mutating func rewind(toAtMost index: Int) throws(ImageDecodingError) {
        stream = try GIFStream(bytes)
        canvas = [UInt8](repeating: 0, count: sizing.width * sizing.height * 4)
        position = 0
        ended = false
    }

    mutating func next() throws(ImageDecodingError) -> ImageFrame? {
        guard !ended else { return nil }
        let width = sizing.width, height = sizing.height
        let next: GIFStream.Frame?
        do throws(ImageDecodingError) { next = try stream.nextFrame() } catch {
            guard position > 0, !strict else { throw error }
            next = nil  // the scan noted it
        }
        guard let frame = next else {
            guard position > 0 else { throw .corrupt(format: .gif, reason: "no image in the file") }
            ended = true
            return nil
        }
        let before = frame.disposal == 3 ? canvas : nil
        let xs = Self.clipped(frame.left, frame.width, to: width)
        var damaged = false
        do throws(ImageDecodingError) {
            try stream.readRows(of: frame) { row, indices in
                let y = frame.top + row
                guard y >= 0, y < height, !xs.isEmpty else { return }
                canvas.withUnsafeMutableBytes { out in
                    frame.palette.withUnsafeBytes { palette in
                        // One 4-byte RGBA palette entry per pixel; alpha is 255 or 0 (transparent:
                        // keep the canvas), so whole entries are copied.
                        var o = (y * width + xs.lowerBound) * 4
                        for i in (xs.lowerBound - frame.left)..<(xs.upperBound - frame.left) {
                            let color = palette.loadUnaligned(fromByteOffset: Int(indices[i]) * 4, as: UInt32.self)
                            if color & PixelOperations.alphaMask != 0 { out.storeBytes(of: color, toByteOffset: o, as: UInt32.self) }
                            o += 4
                        }
                    }
                }
            }
        } catch {
            if strict { throw .refusedInStrictMode(format: .gif, repairs: .damagedData, reason: "\(error)") }
            damaged = true
        }
        let composited = ImageFrame(
            pixels: sizing.shrink(canvas), duration: ImageFrame.clampedDuration(milliseconds: frame.delayCentiseconds * 10))
        position += 1
        if damaged {
            repairs.insert(.damagedData)
            ended = true  // giflib's state is lost after a decoding error
        } else if frame.disposal == 2 {
            for y in Self.clipped(frame.top, frame.height, to: height) where !xs.isEmpty {
                for i in (y * width + xs.lowerBound) * 4..<(y * width + xs.upperBound) * 4 { canvas[i] = 0 }
            }
        } else if let before {
            canvas = before
        }
        return composited
    }

    /// The part of `start ..< start + length` inside `0 ..< size` (empty when outside).
    private static func clipped(_ start: Int, _ length: Int, to size: Int) -> Range<Int> {
        let lower = min(max(start, 0), size)
        return lower..<max(lower, min(start + length, size))
    }
}
