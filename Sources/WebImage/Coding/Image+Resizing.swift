extension Image {
    /// The image scaled down to fit in `maxWidth × maxHeight`, aspect ratio kept, with
    /// ``Resampler`` (area averaging). An image that already fits is returned unchanged.
    ///
    /// ```swift
    /// let thumbnail = image.resized(toFitWidth: 320, height: 240)
    /// ```
    public func resized(toFitWidth maxWidth: Int, height maxHeight: Int) -> Image {
        let size = Resampler.fittingSize(width: pixelWidth, height: pixelHeight, maxWidth: maxWidth, maxHeight: maxHeight)
        return Resampler.resize(self, width: size.width, height: size.height)
    }

    /// Applies ``ImageDecodingOptions/thumbnailMaxPixelSize`` (a no-op when unset or already small).
    func fittingThumbnail(_ options: ImageDecodingOptions) -> Image {
        guard let side = options.thumbnailMaxPixelSize else { return self }
        return resized(toFitWidth: side, height: side)
    }
}

/// The size ``ImageDecodingOptions/thumbnailMaxPixelSize`` gives a `width × height` canvas, and
/// the shrinking of one packed frame to it: animated decoders shrink each frame as it is
/// composited, so full-size frames never pile up.
struct FrameSizing {
    let width: Int, height: Int
    let targetWidth: Int, targetHeight: Int

    init(width: Int, height: Int, options: ImageDecodingOptions) {
        self.width = width
        self.height = height
        let side = options.thumbnailMaxPixelSize ?? max(width, height)
        (targetWidth, targetHeight) = Resampler.fittingSize(width: width, height: height, maxWidth: side, maxHeight: side)
    }

    func shrink(_ pixels: [UInt8]) -> [UInt8] {
        guard targetWidth != width || targetHeight != height else { return pixels }
        return Resampler.resample(pixels, width: width, height: height, bytesPerRow: width * 4, toWidth: targetWidth, toHeight: targetHeight)
    }
}

extension Resampler {
    /// `image` scaled to `width × height`, every animation frame included.
    public static func resize(_ image: Image, width: Int, height: Int) -> Image {
        guard width != image.pixelWidth || height != image.pixelHeight else { return image }
        var result = image
        result.pixels = resample(image.pixels, width: image.pixelWidth, height: image.pixelHeight,
                                 bytesPerRow: image.bytesPerRow, toWidth: width, toHeight: height)
        result.pixelWidth = width
        result.pixelHeight = height
        result.bytesPerRow = width * 4
        if !image.frames.isEmpty {
            result.frames = image.frames.enumerated().map { index, frame in
                ImageFrame(
                    pixels: index == 0 ? result.pixels : resample(
                        frame.pixels, width: image.pixelWidth, height: image.pixelHeight,
                        bytesPerRow: image.pixelWidth * 4, toWidth: width, toHeight: height),
                    duration: frame.duration)
            }
        }
        return result
    }
}
