/// The quality a caller asks an encoder for, made safe to hand a C library.
///
/// ``ImageEncoding/encode(_:as:quality:)`` takes any `Double`: below 0 counts as 0, above 1 as 1
/// (as before), and NaN, which no clamp can place, is refused with a typed error instead of
/// trapping in `Int32(_:)` or reaching libwebp as a NaN `float`.
///
/// ```swift
/// let q = try EncodingQuality.unit(quality, format: .jpeg)   // 0…1
/// ```
enum EncodingQuality {
    /// `quality` clamped to 0…1; throws ``ImageEncodingError/encodingFailed(format:reason:)`` for NaN.
    static func unit(_ quality: Double, format: ImageFormat) throws(ImageEncodingError) -> Double {
        guard !quality.isNaN else { throw .encodingFailed(format: format, reason: "quality is not a number") }
        return min(max(quality, 0), 1)
    }
}
