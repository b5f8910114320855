public import Foundation

extension ImageExport {
    /// How many times its one-canvas pixel limit a streamed animation may cost in frames × canvas:
    /// memory stays a few canvases whatever the count, so the bound is on CPU (at the default 50 MP,
    /// a gigapixel of decoding, processing and encoding: tens of seconds at most).
    public static let streamedWorkFactor = 20

    /// The file made from an animation's encoded `data` one frame at a time (``AnimationTranscoder``):
    /// each frame decoded, turned upright, processed, fitted and encoded, and none kept — a
    /// 160-frame 1000 × 1000 GIF needs a few 4 MB canvases instead of 640 MB. `nil` when there is
    /// nothing to stream: a still image, a format without a lazy animated decoder, or an output
    /// format without an animated encoder (GIF, WebP and APNG have one); then decode and ``export(_:)``.
    ///
    /// `options` limits it as a decode: one canvas against ``ImageDecodingOptions/maxPixelCount``,
    /// frames beyond ``ImageDecodingOptions/maxFrameCount`` dropped, and frames × canvas at most
    /// ``streamedWorkFactor`` times the limit (``ImageDecodingError/tooManyPixels(width:height:frames:limit:)``).
    ///
    /// ```swift
    /// let export = ImageExport(maxSize: (256, 256), format: .webp)
    /// if let (file, format) = try export.exportAnimation(gif, options: export.decodingOptions) { write(file) }
    /// ```
    public func exportAnimation(
        _ data: Data, options: ImageDecodingOptions, coders: ImageCoderRegistry = .default
    ) throws -> (data: Data, format: ImageFormat)? {
        let header = try coders.readHeader(data)
        guard header.frameCount > 1, [.gif, .webp, .apng, .avif].contains(header.format) else { return nil }
        // As ``outputFormat(for:)`` would choose; only formats with an animated encoder stream.
        let output = format ?? header.format
        guard [.gif, .webp, .apng].contains(output) else { return nil }
        var oneFrame = header
        oneFrame.frameCount = 1
        try options.checkPixelLimit(oneFrame)
        let frames = min(header.frameCount, options.maxFrameCount)
        let (work, overflow) = frames.multipliedReportingOverflow(by: max(oneFrame.totalPixelCount, 1))
        let (budget, budgetOverflow) = options.maxPixelCount.multipliedReportingOverflow(by: Self.streamedWorkFactor)
        guard !overflow, budgetOverflow || work <= budget else {
            throw ImageDecodingError.tooManyPixels(
                width: header.pixelWidth, height: header.pixelHeight, frames: frames, limit: budgetOverflow ? .max : budget)
        }
        let orientation = ImageProperties.orientation(of: data, format: header.format)
        // The result's pixels over all frames within the limit a processed animation has
        // (``Image/processed(by:animated:)``), from the steps' sizes before any frame is decoded:
        // a 4 KB GIF asked at 7000 × 7000 is refused, not enlarged frame after frame.
        var size = orientation.swapsWidthAndHeight ? (width: header.pixelHeight, height: header.pixelWidth) : (width: header.pixelWidth, height: header.pixelHeight)
        size = ImageProcessors.outputSize(of: processors, width: size.width, height: size.height)
        if let maxSize, size.width > 0, size.height > 0 {
            let scale = min(1, Double(maxSize.width) / Double(size.width), Double(maxSize.height) / Double(size.height))
            size = (max(1, Int((Double(size.width) * scale).rounded())), max(1, Int((Double(size.height) * scale).rounded())))
        }
        try ImageProcessors.checkAnimation(size, frames: frames)
        var streaming = options
        streaming.thumbnailMaxPixelSize = nil
        guard let animation = try coders.animatedDecoder(for: data, options: streaming), animation.frameCount > 1 else { return nil }
        let quality = output == .webp ? lossyQuality : 1
        let transcoder = AnimationTranscoder(format: output, quality: quality, maxFrames: frames, coders: coders)
        let (file, _) = try transcoder.transcode(animation, orientation: orientation, isOpaque: !header.hasAlpha) { frame in
            var image = processors.isEmpty ? frame : try frame.processed(by: processors)
            if let maxSize { image = image.resized(toFitWidth: maxSize.width, height: maxSize.height) }
            return image
        }
        return (file, output)
    }
}
