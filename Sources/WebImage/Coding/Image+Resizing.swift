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
