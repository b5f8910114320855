/// What walking a GIF without decoding its pixels tells: the header, the area and delay each
/// frame declares, the loop count, and what a lenient decode has to forgive (see ``GIFCoder``).
///
/// A 46 MB file can declare two million frames, so the walk keeps per frame only what its
/// caller will use: the areas and delays of the first `recording` frames (none for a header,
/// the frames drawn for a decode, all for an animated decoder); the rest is a few running
/// totals. It looks at `Task.isCancelled` every 4,096 frames.
struct GIFScan {
    var header: ImageHeader
    /// Width × height each recorded frame declares (frames may declare more than the canvas).
    var frameAreas: [Int] = []
    /// The largest area any frame declares, recorded or not.
    var largestFrameArea = 0
    /// Each recorded frame's delay, clamped as browsers clamp it.
    var durations: [Duration] = []
    /// The NETSCAPE2.0 loop count as stored (0 = forever); 1 when the file has none.
    var loopCount: Int
    var repairs: ImageRepairs = []

    /// How far the frames reach on the canvas, over all of them.
    private struct Extent {
        var anyOffset = false
        var minRight = Int.max, maxRight = 0, minBottom = Int.max, maxBottom = 0

        mutating func add(left: Int, top: Int, width: Int, height: Int) {
            anyOffset = anyOffset || left > 0 || top > 0
            minRight = min(minRight, left + width)
            maxRight = max(maxRight, left + width)
            minBottom = min(minBottom, top + height)
            maxBottom = max(maxBottom, top + height)
        }
    }

    init(_ bytes: PinnedBytes, recording: Int = .max) throws(ImageDecodingError) {
        let stream = try GIFStream(bytes)
        var hasAlpha = false
        var extent = Extent()
        var count = 0
        var inPixels = false
        do throws(ImageDecodingError) {
            while let frame = try stream.nextFrame(withPalette: false) {
                // A file of a million tiny frames walks for seconds: a header read or a decode
                // stopped by its deadline or its departed client stops here (every 4,096 frames).
                if count & 0xFFF == 0xFFF, Task.isCancelled { throw ImageDecodingError.cancelled }
                count += 1
                let area = frame.width * frame.height
                largestFrameArea = max(largestFrameArea, area)
                if frameAreas.count < recording {
                    frameAreas.append(area)
                    durations.append(ImageFrame.clampedDuration(milliseconds: frame.delayCentiseconds * 10))
                }
                extent.add(left: frame.left, top: frame.top, width: frame.width, height: frame.height)
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
            guard count > 0 else { throw error }
            repairs.insert(stream.atEnd && !inPixels ? .missingTrailer : .truncated)
        }
        guard count > 0 else { throw .corrupt(format: .gif, reason: "no image in the file") }
        loopCount = stream.loopCount
        // A zero-size logical screen grows to cover the frames (as browsers do); a frame
        // reaching outside the screen is clipped to it.
        var width = stream.width, height = stream.height
        if width == 0 || height == 0 {
            (width, height) = (extent.maxRight, extent.maxBottom)
            repairs.insert(.canvasMismatch)
            guard width > 0, height > 0 else { throw .corrupt(format: .gif, reason: "zero canvas size") }
        }
        if extent.maxRight > width || extent.maxBottom > height { repairs.insert(.canvasMismatch) }
        // A frame short of the canvas on any side leaves pixels transparent.
        hasAlpha = hasAlpha || extent.anyOffset || extent.minRight < width || extent.minBottom < height
        header = ImageHeader(format: .gif, pixelWidth: width, pixelHeight: height, frameCount: count, hasAlpha: hasAlpha)
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
        let decodedArea = lazily ? largestFrameArea : frameAreas.prefix(options.framesToDecode(of: header.frameCount)).reduce(0) {
            let (sum, overflow) = $0.addingReportingOverflow($1)
            return overflow ? Int.max : sum
        }
        guard decodedArea <= options.maxPixelCount else {
            throw .tooManyPixels(width: header.pixelWidth, height: header.pixelHeight, frames: header.frameCount, limit: options.maxPixelCount)
        }
        return repairs
    }
}
