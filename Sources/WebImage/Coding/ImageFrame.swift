/// One frame of an animated image: a full-canvas, already composited picture and how long it shows.
///
/// Every frame has the image's full size and layout (premultiplied RGBA8, `4 * pixelWidth` bytes
/// per row, top row first): disposal and blending are done by the decoder, so a renderer only has
/// to show the frames one after the other.
///
/// ```swift
/// let gif = try ImageCoderRegistry.default.decode(data)
/// for frame in gif.frames { show(frame.pixels, for: frame.duration) }
/// ```
public struct ImageFrame: Sendable, Equatable {
    /// Premultiplied RGBA8 pixels of the whole canvas.
    public var pixels: [UInt8]
    /// How long the frame is shown, after ``clampedDuration(milliseconds:)``.
    public var duration: Duration

    public init(pixels: [UInt8], duration: Duration) {
        self.pixels = pixels
        self.duration = duration
    }

    /// The delay browsers use for a stored delay: 10 ms or less becomes 100 ms.
    ///
    /// Chrome, Firefox and Safari all treat such short delays as "as fast as the encoder could
    /// write", and old GIFs rely on it; playing them at 0–10 ms would make them flicker.
    ///
    /// ```swift
    /// ImageFrame.clampedDuration(milliseconds: 0)   // .milliseconds(100)
    /// ImageFrame.clampedDuration(milliseconds: 40)  // .milliseconds(40)
    /// ```
    public static func clampedDuration(milliseconds: Int) -> Duration {
        .milliseconds(milliseconds <= 10 ? 100 : milliseconds)
    }

    /// The longest delay a decoder reports for a duration stored in seconds: `Int32.max` ms
    /// (24.8 days), as long as libwebp's timestamps and JPEG XL's clamp go.
    static let longestMilliseconds = Int(Int32.max)

    /// ``clampedDuration(milliseconds:)`` of a duration in seconds computed by a C library from a
    /// file's fields (libavif divides a 64-bit count of ticks by the timescale): NaN, infinity and
    /// anything past ``longestMilliseconds`` are clamped before the conversion to `Int`, which
    /// would trap on them.
    static func clampedDuration(seconds: Double) -> Duration {
        let milliseconds = (seconds * 1000).rounded()
        guard milliseconds > 0 else { return clampedDuration(milliseconds: 0) }  // NaN too
        return clampedDuration(milliseconds: milliseconds < Double(longestMilliseconds) ? Int(milliseconds) : longestMilliseconds)
    }
}
