import Foundation
import WebImage

/// Blends the server's watermark over an image (`wm=`, ``ImageParameters/WatermarkOptions``):
/// scaled when asked, placed by position and offsets, clipped to the image, or repeated over it.
///
/// The blend is Porter–Duff *over* on premultiplied RGBA, the watermark's four channels first
/// multiplied by the opacity: `out = mark + image × (1 − markAlpha)` per channel — what Pillow's
/// `Image.alpha_composite` computes on straight alpha. An opaque image stays opaque.
///
/// ```swift
/// let step = WatermarkStep(watermark: watermark, options: options)
/// let marked = try image.processed(by: [step])
/// ```
struct WatermarkStep: ImageProcessing {
    var watermark: ServerWatermark
    var mark: Image { watermark.image }
    var digest: String { watermark.digest }
    var options: ImageParameters.WatermarkOptions
    /// The mark scaled for the last frame size, kept for the next frames of an animation (each
    /// frame of a 256-frame GIF once scaled and faded the whole mark again).
    private let scaled = ScaledMarks()

    var identifier: String { "watermark(\(digest),\(options.identifier))" }

    /// The scaled watermark (at most the image's size, or its own) and its copy with the
    /// opacity applied (priced, though the opacity is now applied as the blend reads), each 4
    /// bytes a pixel, and a resampler's rows.
    func workingBytes(width: Int, height: Int) -> Int {
        let own = MemoryBudget.area(mark.pixelWidth, mark.pixelHeight)
        let scaled = options.scale > 0 ? MemoryBudget.area(width, height) : own
        let (bytes, overflow) = max(own, scaled).multipliedReportingOverflow(by: 12)
        return overflow ? .max : bytes
    }

    func process(_ image: Image) throws(ImageProcessingError) -> Image {
        let width = image.pixelWidth, height = image.pixelHeight
        guard width > 0, height > 0 else { return image }
        let tile = try scaled.mark(width: width, height: height) { () throws(ImageProcessingError) in try scaledMark(width: width, height: height) }
        // The opacity is applied to the pixels the blend reads, as it reads them: the cost
        // follows the pixels the step touches, not the mark's size.
        let opacity = options.opacity, tileRowBytes = tile.bytesPerRow
        // A single tile covers the rows and columns where it falls, clipped to the image; `re`
        // covers the whole image, the tile and its gap (0 or more, checked when parsed) repeating.
        let repeated = options.position == .repeated
        let tileWidth = tile.pixelWidth, tileHeight = tile.pixelHeight
        let (left, top) = repeated ? (0, 0) : Self.origin(options, width: width, height: height, tile: (tileWidth, tileHeight))
        let periodX = tileWidth + (repeated ? options.x : 0), periodY = tileHeight + (repeated ? options.y : 0)
        let rows = Self.span(top, tileHeight, repeated ? height : nil, within: height)
        let columns = Self.span(left, tileWidth, repeated ? width : nil, within: width)
        var result = image
        let rowBytes = image.bytesPerRow
        var cancelled = false
        result.pixels.withUnsafeMutableBufferPointer { out in
            tile.pixels.withUnsafeBufferPointer { mark in
                for y in rows {
                    if y & 15 == 0, Task.isCancelled { cancelled = true; return }
                    let ty = (y - top) % periodY
                    guard ty < tileHeight else { continue }
                    for x in columns {
                        let tx = (x - left) % periodX
                        guard tx < tileWidth else { continue }
                        let o = y * rowBytes + x * 4, s = ty * tileRowBytes + tx * 4
                        let keep = 255 - Self.fade(mark[s + 3], opacity)
                        // Premultiplied pixels keep the sum within 255; clamped all the same, so that
                        // a pixel whose colour exceeds its alpha cannot trap the server.
                        for c in 0..<4 { out[o + c] = UInt8(min(255, Self.fade(mark[s + c], opacity) + (Int(out[o + c]) * keep + 127) / 255)) }
                    }
                }
            }
        }
        if cancelled { throw .cancelled }
        return result
    }

    /// The pixels of one axis a tile at `start` of `length` covers, clipped to `0 ..< size`; or
    /// all of them (`all`) when it repeats from 0.
    private static func span(_ start: Int, _ length: Int, _ all: Int?, within size: Int) -> Range<Int> {
        if let all { return 0..<all }
        let low = min(max(start, 0), size)
        return low..<max(low, min(start + length, size))
    }

    /// The watermark fitted into `scale` × the image's sides, or as it is; resized from the
    /// smallest of its halvings that covers the fitted size (``ServerWatermark/levels``).
    private func scaledMark(width: Int, height: Int) throws(ImageProcessingError) -> Image {
        guard options.scale > 0 else { return mark }
        let boxWidth = max(1, Int((Double(width) * options.scale).rounded())), boxHeight = max(1, Int((Double(height) * options.scale).rounded()))
        let factor = min(Double(boxWidth) / Double(mark.pixelWidth), Double(boxHeight) / Double(mark.pixelHeight))
        let source = watermark.level(
            covering: Int((Double(mark.pixelWidth) * factor).rounded(.up)), Int((Double(mark.pixelHeight) * factor).rounded(.up)))
        return try source.processed(by: [ImageProcessors.Resize(width: boxWidth, height: boxHeight, mode: .fit, upscale: true)])
    }

    /// One premultiplied channel × `opacity`, rounded.
    static func fade(_ value: UInt8, _ opacity: Double) -> Int { Int((Double(value) * opacity).rounded()) }

    /// Where the watermark's top-left corner goes: `x` and `y` from the edges the position
    /// names, or from the centre on a centred axis (imgproxy's placement).
    static func origin(
        _ options: ImageParameters.WatermarkOptions, width: Int, height: Int, tile: (width: Int, height: Int)
    ) -> (Int, Int) {
        let name = options.position.rawValue
        let left: Int = name.hasSuffix("we") ? options.x : name.hasSuffix("ea") ? width - tile.width - options.x : (width - tile.width) / 2 + options.x
        let top: Int = name.hasPrefix("no") ? options.y : name.hasPrefix("so") ? height - tile.height - options.y : (height - tile.height) / 2 + options.y
        return (left, top)
    }
}

/// The watermark scaled for one frame size, kept while frames of that size come (the frames of
/// one animation). `@unchecked Sendable`: `last` is only read and written under `lock`.
final class ScaledMarks: @unchecked Sendable {
    private let lock = NSLock()
    private var last: (width: Int, height: Int, mark: Image)?

    func mark(width: Int, height: Int, make: () throws(ImageProcessingError) -> Image) throws(ImageProcessingError) -> Image {
        if let kept = lock.withLock({ last }), kept.width == width, kept.height == height { return kept.mark }
        let made = try make()
        lock.withLock { last = (width, height, made) }
        return made
    }
}
