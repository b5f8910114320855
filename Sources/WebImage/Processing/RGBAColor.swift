/// A colour with straight (not premultiplied) alpha, 8 bits a channel: what tints, borders and
/// rotation backgrounds are painted with.
///
/// ```swift
/// let translucentRed = RGBAColor(red: 255, green: 0, blue: 0, alpha: 128)
/// let white = RGBAColor(hex: "ffffff")          // alpha defaults to 255
/// print(translucentRed.hex)                     // "ff000080"
/// ```
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    /// 0 is fully transparent, 255 opaque.
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Parses `RRGGBB` or `RRGGBBAA` hexadecimal digits (an optional leading `#`); `nil` otherwise.
    public init?(hex: some StringProtocol) {
        var digits = Substring(hex)
        if digits.first == "#" { digits = digits.dropFirst() }
        guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
              let value = UInt32(digits, radix: 16) else { return nil }
        let rgba = digits.count == 6 ? value << 8 | 0xFF : value
        self.init(red: UInt8(rgba >> 24), green: UInt8(rgba >> 16 & 0xFF), blue: UInt8(rgba >> 8 & 0xFF), alpha: UInt8(rgba & 0xFF))
    }

    /// `rrggbbaa` in lower-case hexadecimal, as used in processor identifiers.
    public var hex: String {
        [red, green, blue, alpha].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    public var description: String { hex }

    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    public static let clear = RGBAColor(red: 0, green: 0, blue: 0, alpha: 0)

    /// The colour premultiplied, as floating-point RGBA in 0...255.
    var premultiplied: SIMD4<Float> {
        let a = Float(alpha) / 255
        return SIMD4(Float(red) * a, Float(green) * a, Float(blue) * a, Float(alpha))
    }
}
