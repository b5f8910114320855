public import Foundation

/// GIF decoding and encoding over giflib 5.
///
/// Decoding composites every frame onto the full canvas the way browsers do: transparent
/// background (the background colour index is ignored, as Chrome and Firefox ignore it),
/// disposal *none*, *background* (the frame's rectangle becomes transparent) and *previous*
/// (the canvas goes back to what it was before the frame), local and global palettes,
/// interlacing, frame rectangles clipped to the canvas, and delays clamped with
/// ``ImageFrame/clampedDuration(milliseconds:)``. The loop count comes from the NETSCAPE2.0
/// extension. The file is walked once without decoding to count frames, so the pixel limit
/// (canvas × frames) is checked before any pixel buffer exists.
///
/// Encoding writes one local palette per frame: exact when a frame has at most 255 colours,
/// otherwise from ``GIFPalette``'s median cut. Alpha below 128 becomes the transparent index.
///
/// ```swift
/// let animation = try GIFCoder().decode(data, options: .default)
/// print(animation.frameCount, animation.loopCount, animation.frames.map(\.duration))
/// let gif = try GIFCoder().encode(animation, as: .gif, quality: 1)
/// ```
public struct GIFCoder: ImageDecoding, ImageEncoding {
    public init() {}

    public func canDecode(_ format: ImageFormat) -> Bool { format == .gif }
    public func canEncode(_ format: ImageFormat) -> Bool { format == .gif }

    public func readHeader(_ data: Data) throws(ImageDecodingError) -> ImageHeader {
        try Self.withStream(data) { stream throws(ImageDecodingError) in try Self.scan(stream).header }
    }

    public func decode(_ data: Data, options: ImageDecodingOptions) throws(ImageDecodingError) -> Image {
        let (header, frameAreas) = try Self.withStream(data) { stream throws(ImageDecodingError) in try Self.scan(stream) }
        try options.checkPixelLimit(header)
        // Frames may declare rectangles larger than the canvas; decoding them costs their area.
        let decodedArea = frameAreas.prefix(options.firstFrameOnly ? 1 : frameAreas.count).reduce(0, +)
        guard decodedArea <= options.maxPixelCount else {
            throw .tooManyPixels(
                width: header.pixelWidth, height: header.pixelHeight, frames: header.frameCount, limit: options.maxPixelCount)
        }
        let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
        let (frames, loopCount) = try Self.withStream(data) { stream throws(ImageDecodingError) in
            (try Self.composite(stream, limit: options.firstFrameOnly ? 1 : header.frameCount, sizing: sizing), stream.loopCount)
        }
        // Without a transparent index or a frame short of the canvas, every composited frame
        // is opaque (the first covers the canvas, and so does each later one).
        return Image.decoded(
            format: .gif, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
            frameCount: header.frameCount, loopCount: loopCount, scale: options.scale, knownOpaque: !header.hasAlpha)
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        let stills = image.frames.isEmpty ? [image] : (0..<image.frames.count).map { image.frame(at: $0) }
        let hasTransparency = stills.contains { !$0.isOpaque }
        var writer = GIFWriter(width: image.pixelWidth, height: image.pixelHeight)
        writer.loopCount = image.frames.count > 1 ? image.loopCount : nil
        for (index, still) in stills.enumerated() {
            let (palette, indices, transparent) = GIFPalette.quantize(still)
            let milliseconds = image.frames.isEmpty ? 0 : Int(image.frames[index].duration / .milliseconds(1))
            writer.frames.append(GIFWriter.Frame(
                left: 0, top: 0, width: image.pixelWidth, height: image.pixelHeight, indices: indices,
                palette: palette, transparentIndex: transparent,
                // Full-canvas frames over a cleared canvas reproduce transparent frames exactly.
                disposal: hasTransparency ? .background : .none,
                delayCentiseconds: (milliseconds + 5) / 10))
        }
        return try writer.encode()
    }

    // MARK: - Internals

    private static func withStream<T>(
        _ data: Data, _ body: (GIFStream) throws(ImageDecodingError) -> T
    ) throws(ImageDecodingError) -> T {
        guard !data.isEmpty else { throw .empty }
        let result = data.withUnsafeBytes { bytes -> Result<T, ImageDecodingError> in
            do throws(ImageDecodingError) {
                return .success(try body(try GIFStream(bytes)))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Counts the frames, and the pixels each declares, without decoding them.
    private static func scan(_ stream: GIFStream) throws(ImageDecodingError) -> (header: ImageHeader, frameAreas: [Int]) {
        var count = 0, hasAlpha = false
        var areas: [Int] = []
        while let frame = try stream.nextFrame() {
            count += 1
            areas.append(frame.width * frame.height)
            hasAlpha = hasAlpha || stride(from: 3, to: frame.palette.count, by: 4).contains { frame.palette[$0] == 0 }
                || frame.left > 0 || frame.top > 0 || frame.left + frame.width < stream.width
                || frame.top + frame.height < stream.height
            try stream.skipPixels()
        }
        guard count > 0 else { throw .corrupt(format: .gif, reason: "no image in the file") }
        let header = ImageHeader(format: .gif, pixelWidth: stream.width, pixelHeight: stream.height, frameCount: count, hasAlpha: hasAlpha)
        return (header, areas)
    }

    /// Decodes and composites up to `limit` frames, each shrunk to the thumbnail size if asked.
    private static func composite(_ stream: GIFStream, limit: Int, sizing: FrameSizing) throws(ImageDecodingError) -> [ImageFrame] {
        let width = stream.width, height = stream.height
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var frames: [ImageFrame] = []
        while frames.count < limit, let frame = try stream.nextFrame() {
            let before = frame.disposal == 3 ? canvas : nil
            let xs = clipped(frame.left, frame.width, to: width)
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
            frames.append(ImageFrame(
                pixels: sizing.shrink(canvas), duration: ImageFrame.clampedDuration(milliseconds: frame.delayCentiseconds * 10)))
            if frame.disposal == 2 {
                for y in clipped(frame.top, frame.height, to: height) where !xs.isEmpty {
                    for i in (y * width + xs.lowerBound) * 4..<(y * width + xs.upperBound) * 4 { canvas[i] = 0 }
                }
            } else if let before {
                canvas = before
            }
        }
        guard !frames.isEmpty else { throw .corrupt(format: .gif, reason: "no image in the file") }
        return frames
    }

    /// The part of `start ..< start + length` inside `0 ..< size` (empty when outside).
    private static func clipped(_ start: Int, _ length: Int, to size: Int) -> Range<Int> {
        let lower = min(max(start, 0), size)
        return lower..<max(lower, min(start + length, size))
    }
}
