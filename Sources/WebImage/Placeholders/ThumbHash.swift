import Foundation

/// A parsed ThumbHash: an image's average colour, aspect ratio, alpha and a few cosine
/// components of its luminance and colour in about 25 bytes (Evan Wallace's format), drawn as a
/// placeholder before the image arrives. Usually carried as base64.
///
/// Parsing checks the length against the header and refuses impossible fields, throwing
/// ``PlaceholderError``.
///
/// ```swift
/// let hash = try ThumbHash(base64: "1QcSHQRnh493V4dIh4eXh1h4kJUI")
/// let placeholder = try hash.image()          // about 32 pixels on its long side
/// print(hash.averageColor.hex, hash.approximateAspectRatio)
/// ```
public struct ThumbHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash's bytes.
    public let bytes: [UInt8]

    /// Parses and checks `bytes`.
    public init(bytes: [UInt8]) throws(PlaceholderError) {
        guard bytes.count >= 5 else { throw .invalidLength(expected: 5, actual: bytes.count) }
        let header = Header(bytes)
        guard header.storedLX > 0, header.storedLY > 0 else { throw .invalidValue("a zero luminance component count") }
        let expected = header.expectedLength
        guard bytes.count == expected else { throw .invalidLength(expected: expected, actual: bytes.count) }
        self.bytes = bytes
    }

    /// Parses base64 text (standard alphabet, padding optional).
    public init(base64: String) throws(PlaceholderError) {
        var text = base64
        while text.utf8.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { throw .invalidCharacter(base64) }
        try self.init(bytes: Array(data))
    }

    /// The hash as standard base64 without padding, as ThumbHash's own demo shows it.
    public var base64String: String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    public var description: String { base64String }

    /// The average colour (straight alpha), from the header alone.
    public var averageColor: RGBAColor {
        let header = Header(bytes)
        let rgb = header.rgb(l: header.lDC, p: header.pDC, q: header.qDC)
        func byte(_ value: Double) -> UInt8 { UInt8((max(0, min(1, value)) * 255).rounded()) }
        return RGBAColor(red: byte(rgb[0]), green: byte(rgb[1]), blue: byte(rgb[2]), alpha: byte(header.aDC))
    }

    /// Width over height of the image hashed, roughly (a ratio of the luminance component counts).
    public var approximateAspectRatio: Double {
        let header = Header(bytes)
        return Double(header.storedLX) / Double(header.storedLY)
    }

    /// The header: the DC terms, scales and the luminance component counts.
    struct Header {
        let lDC, pDC, qDC, lScale, pScale, qScale, aDC, aScale: Double
        let hasAlpha, isLandscape: Bool
        /// The count stored for the short side; the long side is 7 (5 with alpha).
        let storedLX, storedLY: Int

        init(_ hash: [UInt8]) {
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double(header24 >> 6 & 63) / 31.5 - 1
            qDC = Double(header24 >> 12 & 63) / 31.5 - 1
            lScale = Double(header24 >> 18 & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Double(header16 >> 3 & 63) / 63
            qScale = Double(header16 >> 9 & 63) / 63
            isLandscape = header16 >> 15 != 0
            let long = hasAlpha ? 5 : 7
            storedLX = isLandscape ? long : header16 & 7
            storedLY = isLandscape ? header16 & 7 : long
            aDC = hasAlpha && hash.count > 5 ? Double(hash[5] & 15) / 15 : 1
            aScale = hasAlpha && hash.count > 5 ? Double(hash[5] >> 4) / 15 : 0
        }

        var lx: Int { max(3, storedLX) }
        var ly: Int { max(3, storedLY) }
        var acStart: Int { hasAlpha ? 6 : 5 }

        var expectedLength: Int {
            let count = ThumbHash.acCount(lx, ly) + 2 * ThumbHash.acCount(3, 3) + (hasAlpha ? ThumbHash.acCount(5, 5) : 0)
            return acStart + (count + 1) / 2
        }

        /// LPQ back to RGB.
        func rgb(l: Double, p: Double, q: Double) -> SIMD3<Double> {
            let b = l - 2 / 3 * p
            let r = (3 * l - b + q) / 2
            return SIMD3(r, r - q, b)
        }
    }

    /// The AC components a channel of `nx × ny` keeps: those with cx · ny < nx · (ny − cy),
    /// a triangle of the low frequencies, DC excluded.
    static func acCount(_ nx: Int, _ ny: Int) -> Int {
        acIndices(nx, ny).count - 1
    }

    /// (cx, cy) of a channel's kept components, DC first, in the hash's order.
    static func acIndices(_ nx: Int, _ ny: Int) -> [(cx: Int, cy: Int)] {
        var indices: [(Int, Int)] = []
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) { indices.append((cx, cy)); cx += 1 }
        }
        return indices
    }
}
