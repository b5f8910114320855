extension ImageFormat {
    /// Memory this format's encoder takes beyond the image it is given, per pixel of one frame,
    /// at its highest quality, in bytes: what a memory budget prices an encode with.
    /// `scripts/measure/measure-encoder-memory` (the slope between a 1 MP and a 4 MP source;
    /// 2026-11-26, a 2-core VM): JPEG 2.9, PNG 5.8, GIF 8.9, WebP 32.3 (lossless at q=100),
    /// AVIF 32.3.
    ///
    /// ```swift
    /// let price = 4_000_000 * (4 + ImageFormat.webp.encodingBytesPerPixel)  // a 4 MP WebP
    /// ```
    public var encodingBytesPerPixel: Int {
        switch self {
        case .avif, .webp, .heic, .heif, .jpegXL: 33
        case .gif: 9
        case .png, .apng: 6
        default: 3
        }
    }
}
