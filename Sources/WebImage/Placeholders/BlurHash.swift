import Foundation

/// A parsed BlurHash: a few cosine components of an image's colours in a short base-83 string
/// (woltapp's format), drawn as a blurred placeholder before the image arrives.
///
/// Parsing checks everything a stranger's string could get wrong — its length against the size
/// flag, every character, values the format cannot hold — and throws ``PlaceholderError``.
///
/// ```swift
/// let hash = try BlurHash("LEHV6nWB2yk8pyo0adR*.7kCMdnj")
/// let placeholder = try hash.image(width: 32, height: 32)
/// print(hash.components, hash.averageColor.hex)  // (x: 4, y: 3) 979695ff
/// ```
public struct BlurHash: Sendable, Hashable, CustomStringConvertible {
    /// The largest side ``image(width:height:punch:)`` draws: a placeholder is scaled up by the
    /// UI, and a bigger request is a stranger asking for memory.
    public static let maxDecodedSide = 1024

    /// The hash as text.
    public let string: String
    /// How many cosine components each axis holds (1…9).
    public let components: (x: Int, y: Int)
    /// The components' colours in linear light, `x` fastest; the first is the average.
    let colors: [SIMD3<Double>]
    /// The largest absolute AC value the quantisation allowed (before punch).
    let maximumValue: Double

    public var description: String { string }

    /// Parses and checks `string`.
    public init(_ string: String) throws(PlaceholderError) {
        let bytes = Array(string.utf8)
        guard bytes.count >= 6 else { throw .invalidLength(expected: 6, actual: bytes.count) }
        let sizeFlag = try Base83.decode(bytes[0..<1])
        guard sizeFlag < 81 else { throw .invalidComponents(x: sizeFlag % 9 + 1, y: sizeFlag / 9 + 1) }
        let x = sizeFlag % 9 + 1, y = sizeFlag / 9 + 1
        let expected = 4 + 2 * x * y
        guard bytes.count == expected else { throw .invalidLength(expected: expected, actual: bytes.count) }
        let quantisedMaximum = try Base83.decode(bytes[1..<2])
        maximumValue = Double(quantisedMaximum + 1) / 166
        let dc = try Base83.decode(bytes[2..<6])
        guard dc < 1 << 24 else { throw .invalidValue("average colour \(dc) is over 24 bits") }
        var colors = [SIMD3(SRGBTransfer.toLinear[dc >> 16], SRGBTransfer.toLinear[dc >> 8 & 255], SRGBTransfer.toLinear[dc & 255])]
        for index in 1..<(x * y) {
            let value = try Base83.decode(bytes[(4 + 2 * index)..<(6 + 2 * index)])
            guard value < 19 * 19 * 19 else { throw .invalidValue("component \(index) value \(value) is over 19³") }
            let quantised = SIMD3(Double(value / (19 * 19)), Double(value / 19 % 19), Double(value % 19))
            colors.append(SIMD3(Self.signedSquare((quantised[0] - 9) / 9), Self.signedSquare((quantised[1] - 9) / 9),
                                Self.signedSquare((quantised[2] - 9) / 9)))
        }
        self.string = string
        self.components = (x, y)
        self.colors = colors
    }

    /// The average colour (the DC component), opaque.
    public var averageColor: RGBAColor {
        RGBAColor(red: UInt8(SRGBTransfer.toSRGB(colors[0][0])), green: UInt8(SRGBTransfer.toSRGB(colors[0][1])),
                  blue: UInt8(SRGBTransfer.toSRGB(colors[0][2])))
    }

    /// The placeholder drawn at `width × height` (each 1…``maxDecodedSide``, checked before
    /// anything is allocated). `punch` above 1 strengthens the contrast, below 1 softens it.
    /// The result is opaque, its ``Image/format`` ``ImageFormat/png`` (the format it would be saved in).
    ///
    /// ```swift
    /// let placeholder = try BlurHash(string).image(width: 40, height: 30, punch: 1.2)
    /// ```
    public func image(width: Int, height: Int, punch: Double = 1) throws(PlaceholderError) -> Image {
        guard (1...Self.maxDecodedSide).contains(width), (1...Self.maxDecodedSide).contains(height) else {
            throw .invalidSize(width: width, height: height, limit: Self.maxDecodedSide)
        }
        guard punch.isFinite, punch > 0 else { throw .invalidValue("punch \(punch) must be a positive number") }
        let (nx, ny) = components
        let scale = maximumValue * punch
        let cosX = Self.cosines(count: nx, size: width), cosY = Self.cosines(count: ny, size: height)
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for py in 0..<height {
            for px in 0..<width {
                var sum = SIMD3<Double>(repeating: 0)
                for j in 0..<ny {
                    for i in 0..<nx {
                        let basis = cosX[px * nx + i] * cosY[py * ny + j]
                        let index = i + j * nx
                        sum += colors[index] * (index == 0 ? 1 : scale) * basis
                    }
                }
                let offset = (py * width + px) * 4
                for c in 0..<3 { pixels[offset + c] = UInt8(SRGBTransfer.toSRGB(sum[c])) }
            }
        }
        return Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: true)
    }

    /// cos(π · component · pixel / size) for every pixel (rows of `count` components).
    static func cosines(count: Int, size: Int) -> [Double] {
        var table: [Double] = []
        table.reserveCapacity(size * count)
        for pixel in 0..<size {
            for component in 0..<count {
                let angle: Double = Double.pi * Double(pixel) * Double(component) / Double(size)
                table.append(cos(angle))
            }
        }
        return table
    }

    static func signedSquare(_ value: Double) -> Double { value < 0 ? -value * value : value * value }

    public static func == (lhs: BlurHash, rhs: BlurHash) -> Bool { lhs.string == rhs.string }
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }
}
