import Foundation

/// Writes an ``Image`` as an APNG: each frame compressed by libspng (through ``PNGCoder``) at
/// full canvas size, its IDAT data moved into `fdAT` chunks behind an `fcTL`.
///
/// All frames share one colour type: RGB when every frame is opaque, RGBA otherwise. The first
/// frame is the default image (IDAT), so viewers without APNG support show it. Durations are
/// written in milliseconds (1/1000 s; longer than 65.535 s in 1/100 s, capped at 655.35 s).
enum APNGWriter {
    static func encode(_ image: Image) throws(ImageEncodingError) -> Data {
        let count = max(image.frames.count, 1)
        // acTL counts frames in 32 bits, and fcTL/fdAT sequence numbers (two a frame) too.
        guard count <= Int(UInt32.max / 2) else { throw .encodingFailed(format: .apng, reason: "\(count) frames are over APNG's count") }
        // PNG's sides are 31-bit (and the UInt32 conversions below would trap past 32).
        try image.checkEncodable(as: .apng, maxSide: Int(Int32.max))
        let opaque = image.isOpaque
        var out = PNGChunks.signature
        var sequence: UInt32 = 0
        for index in 0..<count {
            guard !Task.isCancelled else { throw .cancelled }
            var still = image.frames.isEmpty ? image : image.frame(at: index)
            still.isOpaque = opaque
            let png = try PNGCoder().encode(still, as: .png, quality: 1)
            let (ihdr, idat) = try compressedData(png)
            // One IDAT or fdAT chunk holds the frame's data: its length field is 32 bits.
            guard idat.count <= Int(UInt32.max) - 4 else {
                throw .encodingFailed(format: .apng, reason: "frame \(index) compresses to over 4 GB")
            }
            if index == 0 {
                PNGChunks.append(PNGChunks.type("IHDR"), ihdr, to: &out)
                var actl: [UInt8] = []
                PNGChunks.appendUInt32(UInt32(count), to: &actl)
                PNGChunks.appendUInt32(UInt32(clamping: max(image.loopCount, 0)), to: &actl)
                PNGChunks.append(PNGChunks.type("acTL"), actl, to: &out)
            }
            let duration = image.frames.isEmpty ? Duration.zero : image.frames[index].duration
            PNGChunks.append(PNGChunks.type("fcTL"), frameControl(sequence, image, duration), to: &out)
            sequence += 1
            if index == 0 {
                PNGChunks.append(PNGChunks.type("IDAT"), idat, to: &out)
            } else {
                var fdat: [UInt8] = []
                PNGChunks.appendUInt32(sequence, to: &fdat)
                fdat.append(contentsOf: idat)
                PNGChunks.append(PNGChunks.type("fdAT"), fdat, to: &out)
                sequence += 1
            }
        }
        PNGChunks.append(PNGChunks.type("IEND"), [], to: &out)
        return Data(out)
    }

    /// IHDR data and all IDAT data (joined) of a PNG written by libspng.
    private static func compressedData(_ png: Data) throws(ImageEncodingError) -> (ihdr: [UInt8], idat: [UInt8]) {
        png.withUnsafeBytes { bytes in
            let walk = PNGChunks(bytes)
            var ihdr: [UInt8] = [], idat: [UInt8] = []
            for chunk in walk.chunks {
                if chunk.type == PNGChunks.type("IHDR") { ihdr = Array(bytes[chunk.data]) }
                if chunk.type == PNGChunks.type("IDAT") { idat.append(contentsOf: bytes[chunk.data]) }
            }
            return (ihdr, idat)
        }
    }

    private static func frameControl(_ sequence: UInt32, _ image: Image, _ duration: Duration) -> [UInt8] {
        // 16-bit numerator: up to 65,535 ms in 1/1000 s, then up to 655,350 ms in 1/100 s.
        let milliseconds = duration.wholeMilliseconds(clampedTo: 0...655_350)
        let (numerator, denominator) = milliseconds <= 65_535 ? (milliseconds, 1000) : (milliseconds / 10, 100)
        var fctl: [UInt8] = []
        PNGChunks.appendUInt32(sequence, to: &fctl)
        PNGChunks.appendUInt32(UInt32(image.pixelWidth), to: &fctl)
        PNGChunks.appendUInt32(UInt32(image.pixelHeight), to: &fctl)
        PNGChunks.appendUInt32(0, to: &fctl)
        PNGChunks.appendUInt32(0, to: &fctl)
        PNGChunks.appendUInt16(UInt16(numerator), to: &fctl)
        PNGChunks.appendUInt16(UInt16(denominator), to: &fctl)
        fctl.append(contentsOf: [APNGAnimation.DisposeOp.none.rawValue, APNGAnimation.BlendOp.source.rawValue])
        return fctl
    }
}
