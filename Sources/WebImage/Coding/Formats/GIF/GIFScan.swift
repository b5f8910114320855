/// What walking a GIF without decoding its pixels tells: the header, the area and delay each
/// frame declares, the loop count, and what a lenient decode has to forgive (see ``GIFCoder``).
struct GIFScan {
    var header: ImageHeader
    /// Width × height each frame declares (frames may declare more than the canvas).
    var frameAreas: [Int] = []
    /// Each frame's delay, clamped as browsers clamp it.
    var durations: [Duration] = []
    /// The NETSCAPE2.0 loop count as stored (0 = forever); 1 when the file has none.
    var loopCount: Int
    var repairs: ImageRepairs = []

    /// Where a frame lies on the canvas.
    private struct Bounds {
        var left, top, width, height: Int
    }

    init(_ bytes: PinnedBytes) throws(ImageDecodingError) {
        let stream = try GIFStream(bytes)
        var hasAlpha = false
        var bounds: [Bounds] = []
        var inPixels = false
        do throws(ImageDecodingError) {
            while let frame = try stream.nextFrame(withPalette: false) {
                // A file of a million tiny frames walks for seconds: a decode cancelled by its
                // deadline or its departed client stops here too (every 4,096 frames).
                if frameAreas.count & 0xFFF == 0xFFF, Task.isCancelled { throw ImageDecodingError.cancelled }
                frameAreas.append(frame.width * frame.height)
                durations.append(ImageFrame.clampedDuration(milliseconds: frame.delayCentiseconds * 10))
                bounds.append(Bounds(left: frame.left, top: frame.top, width: frame.width, height: frame.height))
                // The transparent index has alpha 0 whether or not the palette reaches it.
                hasAlpha = hasAlpha || frame.transparentIndex != nil
                if frame.paletteCount == 0 || frame.transparentBeyondPalette { repairs.insert(.paletteMismatch) }
                if frame.hasWideCodes { repairs.insert(.codingBeyondSpec) }
                inPixels = true
                try stream.skipPixels()
                inPixels = false
            }
        } catch {
            // The data ends (or breaks) after some frames: keep those, as browsers do.
            if case .cancelled = error { throw error }
            guard !frameAreas.isEmpty else { throw error }
            repairs.insert(stream.atEnd && !inPixels ? .missingTrailer : .truncated)
        }
        guard !frameAreas.isEmpty else { throw .corrupt(format: .gif, reason: "no image in the file") }
        loopCount = stream.loopCount
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
        header = ImageHeader(format: .gif, pixelWidth: width, pixelHeight: height, frameCount: frameAreas.count, hasAlpha: hasAlpha)
    }

    /// Checks what decoding with `options` allows, before any pixel buffer exists: the canvas
    /// against the pixel limit (× frames for a full decode; once for an animated decoder, which
    /// holds one canvas: `lazily`), the frames' declared areas likewise, and the repairs in strict
    /// mode. Returns the repairs the decode forgives.
    func check(_ options: ImageDecodingOptions, lazily: Bool = false) throws(ImageDecodingError) -> ImageRepairs {
        var counted = options
        counted.firstFrameOnly = options.firstFrameOnly || lazily
        try counted.checkPixelLimit(header)
        let repairs = try options.allow(repairs, in: .gif, "the file breaks the GIF rules (\(repairs.names.joined(separator: ", ")))")
        // Frames may declare rectangles larger than the canvas; decoding them costs their area.
        // Each area is under 2³² (16-bit sides); the sum saturates rather than trusting the frame count.
        let decodedArea = lazily ? frameAreas.max() ?? 0 : frameAreas.prefix(options.framesToDecode(of: frameAreas.count)).reduce(0) {
            let (sum, overflow) = $0.addingReportingOverflow($1)
            return overflow ? Int.max : sum
        }
        guard decodedArea <= options.maxPixelCount else {
            throw .tooManyPixels(width: header.pixelWidth, height: header.pixelHeight, frames: header.frameCount, limit: options.maxPixelCount)
        }
        return repairs
    }
}
