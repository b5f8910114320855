import Foundation

extension ImageProperties {
    /// BMP: palette files are `indexed` with their index bits; 16-bit ones `rgb` of 5 bits;
    /// 24-bit `rgb` and 32-bit `rgba` of 8 bits (browsers use a 32-bit file's fourth byte as alpha).
    mutating func readBMP(_ data: Data) {
        hasICCProfile = false
        guard let header = data.withUnsafeBytes({ try? BMPHeader($0, at: 14) }) else { return }
        (colorModel, bitDepth) = Self.model(bitCount: header.bitCount, alpha: header.bitCount == 32 || header.hasAlphaMask)
    }

    /// ICO/CUR: the entry the decoder picks by default (the largest); PNG entries by their IHDR,
    /// bitmap entries as BMP, with alpha (the AND mask or 32-bit alpha makes pixels transparent).
    mutating func readICO(_ data: Data) {
        hasICCProfile = false
        data.withUnsafeBytes { bytes in
            guard let entry = try? ICODirectory(bytes).preferred(size: nil) else { return }
            guard entry.isPNG else {
                (colorModel, bitDepth) = Self.model(bitCount: entry.bitCount, alpha: true)
                return
            }
            let ihdr = entry.range.lowerBound + 24
            guard ihdr + 1 < entry.range.upperBound else { return }
            bitDepth = Int(bytes[ihdr])
            colorModel = switch bytes[ihdr + 1] { case 0: .gray; case 2: .rgb; case 3: .indexed; case 4: .grayAlpha; default: .rgba }
        }
    }

    private static func model(bitCount: Int, alpha: Bool) -> (ColorModel, Int) {
        switch bitCount {
        case ...8: (.indexed, bitCount)
        case 16: (alpha ? .rgba : .rgb, 5)
        default: (alpha ? .rgba : .rgb, 8)
        }
    }
}
