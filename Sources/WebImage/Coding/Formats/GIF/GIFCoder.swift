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
/// Leniency, as browsers (``Image/repairs``; ``ImageDecodingOptions/strict`` refuses each): frames
/// reaching outside the logical screen are clipped to it (Pillow and Chromium grow the screen
/// instead; clipping keeps the size the header reported and the pixel limit was checked
/// against); a zero-size logical screen grows to the union of the frames; a missing trailer or
/// data cut inside a frame keeps the frames before it and the rows decoded; a bad LZW code keeps
/// the decoded frames and rows; a frame with no palette at all draws black; a transparent index
/// beyond the palette is honoured. A local palette without a global one is valid GIF and
/// decodes in both modes.
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
        let scan = try Self.withStream(data) { stream throws(ImageDecodingError) in try Self.scan(stream) }
        let header = scan.header
        try options.checkPixelLimit(header)
        var repairs = try options.allow(scan.repairs, in: .gif, "the file breaks the GIF rules (\(scan.repairs.names.joined(separator: ", ")))")
        // Frames may declare rectangles larger than the canvas; decoding them costs their area.
        let decodedArea = scan.frameAreas.prefix(options.firstFrameOnly ? 1 : scan.frameAreas.count).reduce(0, +)
        guard decodedArea <= options.maxPixelCount else {
            throw .tooManyPixels(
                width: header.pixelWidth, height: header.pixelHeight, frames: header.frameCount, limit: options.maxPixelCount)
        }
        let sizing = FrameSizing(width: header.pixelWidth, height: header.pixelHeight, options: options)
        let (frames, loopCount) = try Self.withStream(data) { stream throws(ImageDecodingError) in
            let limit = options.firstFrameOnly ? 1 : header.frameCount
            let frames = try Self.composite(stream, limit: limit, sizing: sizing, strict: options.strict, repairs: &repairs)
            return (frames, stream.loopCount)
        }
        // Without a transparent index or a frame short of the canvas, every composited frame
        // is opaque (the first covers the canvas, and so does each later one).
        var image = Image.decoded(
            format: .gif, pixelWidth: sizing.targetWidth, pixelHeight: sizing.targetHeight, frames: frames,
            frameCount: header.frameCount, loopCount: loopCount, scale: options.scale,
            knownOpaque: !header.hasAlpha && repairs.isDisjoint(with: [.damagedData, .truncated]))
        image.repairs = repairs
        return image
    }

    public func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        try image.checkEncodable(as: format)
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

    /// Counts the frames, and the pixels each declares, without decoding them; notes what a
    /// lenient decode has to forgive (see the type's documentation).
    private static func scan(_ stream: GIFStream) throws(ImageDecodingError) -> (header: ImageHeader, frameAreas: [Int], repairs: ImageRepairs) {
        var hasAlpha = false, repairs: ImageRepairs = []
        var areas: [Int] = []
        var bounds: [(left: Int, top: Int, width: Int, height: Int)] = []
        var inPixels = false
        do throws(ImageDecodingError) {
            while let frame = try stream.nextFrame() {
                areas.append(frame.width * frame.height)
                bounds.append((frame.left, frame.top, frame.width, frame.height))
                hasAlpha = hasAlpha || stride(from: 3, to: frame.palette.count, by: 4).contains { frame.palette[$0] == 0 }
                if frame.paletteCount == 0 || frame.transparentBeyondPalette { repairs.insert(.paletteMismatch) }
                inPixels = true
                try stream.skipPixels()
                inPixels = false
            }
        } catch {
            // The data ends (or breaks) after some frames: keep those, as browsers do.
            guard !areas.isEmpty else { throw error }
            repairs.insert(stream.atEnd && !inPixels ? .missingTrailer : .truncated)
        }
        guard !areas.isEmpty else { throw .corrupt(format: .gif, reason: "no image in the file") }
        // A zero-size logical screen grows to cover the frames (as browsers do); a frame
        // reaching outside the screen is clipped to it.
        var width = stream.width, height = stream.height
        if width == 0 || height == 0 {
            width = bounds.map { $0.left + $0.width }.max() ?? 0
            height = bounds.map { $0.top + $0.height }.max() ?? 0
            repairs.insert(.canvasMismatch)
            guard width > 0, height > 0 else { throw .corrupt(format: .gif, reason: "zero canvas size") }
        }
        for frame in bounds {
            if frame.left + frame.width > width || frame.top + frame.height > height { repairs.insert(.canvasMismatch) }
            hasAlpha = hasAlpha || frame.left > 0 || frame.top > 0 || frame.left + frame.width < width || frame.top + frame.height < height
        }
        let header = ImageHeader(format: .gif, pixelWidth: width, pixelHeight: height, frameCount: areas.count, hasAlpha: hasAlpha)
        return (header, areas, repairs)
    }

    /// Decodes and composites up to `limit` frames, each shrunk to the thumbnail size if asked.
    /// Damaged compressed data (a bad LZW code, data cut inside a frame) keeps the frames
    /// decoded so far and the damaged frame's decoded rows, unless `strict`.
    private static func composite(
        _ stream: GIFStream, limit: Int, sizing: FrameSizing, strict: Bool, repairs: inout ImageRepairs
    ) throws(ImageDecodingError) -> [ImageFrame] {
        let width = sizing.width, height = sizing.height
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var frames: [ImageFrame] = []
        while frames.count < limit {
            let next: GIFStream.Frame?
            do throws(ImageDecodingError) { next = try stream.nextFrame() } catch {
                guard !frames.isEmpty, !strict else { throw error }
                break  // already noted by the scan
            }
            guard let frame = next else { break }
            let before = frame.disposal == 3 ? canvas : nil
            let xs = clipped(frame.left, frame.width, to: width)
            var damage: ImageDecodingError?
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
                damage = error
            }
            frames.append(ImageFrame(
                pixels: sizing.shrink(canvas), duration: ImageFrame.clampedDuration(milliseconds: frame.delayCentiseconds * 10)))
            if damage != nil {
                repairs.insert(.damagedData)
                break  // giflib's state is lost after a decoding error
            }
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
