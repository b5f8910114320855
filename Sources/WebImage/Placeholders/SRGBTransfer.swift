import Foundation

/// The sRGB transfer function both ways, as BlurHash defines it: 8-bit sRGB to linear light
/// (tabulated: 256 values), linear light back to a rounded 8-bit value.
enum SRGBTransfer {
    static let toLinear: [Double] = (0..<256).map { value in
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// `linear` clamped to 0…1, encoded, scaled to 0…255 and rounded half up.
    static func toSRGB(_ linear: Double) -> Int {
        let v = max(0, min(1, linear))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }
}
