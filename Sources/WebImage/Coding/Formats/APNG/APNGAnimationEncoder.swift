public import Foundation

/// An APNG written one frame at a time: the ``AnimatedImageEncoding`` of ``APNGCoder``.
///
/// Each frame is compressed by libspng (through ``PNGCoder``) at full canvas size, its IDAT
/// data moved into `fdAT` chunks behind an `fcTL` (blend *source*, dispose *none*). All frames
/// share one colour type: RGB when ``AnimationEncodingParameters/isOpaque`` (the caller's promise:
/// alpha is not written), RGBA otherwise. The first frame is
/// the default image (IDAT), so viewers without APNG support show it. Durations are written in
/// milliseconds (1/1000 s; longer than 65.535 s in 1/100 s, capped at 655.35 s). The frame
/// count in `acTL` is filled in by ``finish()``; the file written so far is all it holds.
///
/// ```swift
/// let encoder = try APNGAnimationEncoder(AnimationEncodingParameters(pixelWidth: 2, pixelHeight: 2, loopCount: 0))
/// try encoder.add(ImageFrame(pixels: red, duration: .milliseconds(100)))
/// let apng = try encoder.finish()
/// ```
public final class APNGAnimationEncoder: AnimatedImageEncoding {
    public let format = ImageFormat.apng
    public private(set) var frameCount = 0
    private let parameters: AnimationEncodingParameters
    private var out = PNGChunks.signature
    private var sequence: UInt32 = 0
    /// Where `acTL`'s data starts in `out`, once the first frame is written.
    private var controlOffset: Int?
    private var finished = false

    public init(_ parameters: AnimationEncodingParameters) throws(ImageEncodingError) {
        // PNG's sides are 31-bit (and the UInt32 conversions below would trap past 32).
        try parameters.checkSides(.apng, maxSide: Int(Int32.max))
        self.parameters = parameters
    }

    public func add(_ frame: ImageFrame) throws(ImageEncodingError) {
        guard !Task.isCancelled else { throw .cancelled }
        guard !finished else { throw .encodingFailed(format: .apng, reason: "the file is finished") }
        if let problem = frame.encodingProblem(parameters) { throw .encodingFailed(format: .apng, reason: problem) }
        // acTL counts frames in 32 bits, and fcTL/fdAT sequence numbers (two a frame) too.
        guard frameCount < Int(UInt32.max / 2) else { throw .encodingFailed(format: .apng, reason: "over APNG's frame count") }
        let still = Image(
            format: .png, pixelWidth: parameters.pixelWidth, pixelHeight: parameters.pixelHeight, pixels: frame.pixels,
            isOpaque: parameters.isOpaque)
        let (ihdr, idat) = try Self.compressedData(try PNGCoder().encode(still, as: .png, quality: 1))
        // One IDAT or fdAT chunk holds the frame's data: its length field is 32 bits.
        guard idat.count <= Int(UInt32.max) - 4 else {
            throw .encodingFailed(format: .apng, reason: "frame \(frameCount) compresses to over 4 GB")
        }
        if frameCount == 0 {
            PNGChunks.append(PNGChunks.type("IHDR"), ihdr, to: &out)
            controlOffset = out.count + 8
            var actl: [UInt8] = []
            PNGChunks.appendUInt32(0, to: &actl)  // the frame count, filled in by `finish`
            PNGChunks.appendUInt32(UInt32(clamping: max(parameters.loopCount, 0)), to: &actl)
            PNGChunks.append(PNGChunks.type("acTL"), actl, to: &out)
        }
        PNGChunks.append(PNGChunks.type("fcTL"), frameControl(frame.duration), to: &out)
        sequence += 1
        if frameCount == 0 {
            PNGChunks.append(PNGChunks.type("IDAT"), idat, to: &out)
        } else {
            var fdat: [UInt8] = []
            PNGChunks.appendUInt32(sequence, to: &fdat)
            fdat.append(contentsOf: idat)
            PNGChunks.append(PNGChunks.type("fdAT"), fdat, to: &out)
            sequence += 1
        }
        frameCount += 1
    }

    public func finish() throws(ImageEncodingError) -> Data {
        guard !finished else { throw .encodingFailed(format: .apng, reason: "the file is finished") }
        guard frameCount > 0, let controlOffset else { throw .encodingFailed(format: .apng, reason: "no frames") }
        finished = true
        // acTL's frame count, and its CRC over type and data again.
        var count: [UInt8] = []
        PNGChunks.appendUInt32(UInt32(frameCount), to: &count)
        out.replaceSubrange(controlOffset..<(controlOffset + 4), with: count)
        let crc = out.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[(controlOffset - 4)..<(controlOffset + 8)])) }
        var crcBytes: [UInt8] = []
        PNGChunks.appendUInt32(crc, to: &crcBytes)
        out.replaceSubrange((controlOffset + 8)..<(controlOffset + 12), with: crcBytes)
        PNGChunks.append(PNGChunks.type("IEND"), [], to: &out)
        defer { out = [] }
        return Data(out)
    }

    /// IHDR data and all IDAT data (joined) of a PNG written by libspng.
    private static func compressedData(_ png: Data) throws(ImageEncodingError) -> (ihdr: [UInt8], idat: [UInt8]) {
        png.withUnsafeBytes { bytes in
            var walk = PNGChunks(bytes)
            var ihdr: [UInt8] = [], idat: [UInt8] = []
            while let chunk = walk.next() {
                if chunk.type == PNGChunks.type("IHDR") { ihdr = Array(bytes[chunk.data]) }
                if chunk.type == PNGChunks.type("IDAT") { idat.append(contentsOf: bytes[chunk.data]) }
            }
            return (ihdr, idat)
        }
    }

    private func frameControl(_ duration: Duration) -> [UInt8] {
        // 16-bit numerator: up to 65,535 ms in 1/1000 s, then up to 655,350 ms in 1/100 s.
        let milliseconds = duration.wholeMilliseconds(clampedTo: 0...655_350)
        let (numerator, denominator) = milliseconds <= 65_535 ? (milliseconds, 1000) : (milliseconds / 10, 100)
        var fctl: [UInt8] = []
        PNGChunks.appendUInt32(sequence, to: &fctl)
        PNGChunks.appendUInt32(UInt32(parameters.pixelWidth), to: &fctl)
        PNGChunks.appendUInt32(UInt32(parameters.pixelHeight), to: &fctl)
        PNGChunks.appendUInt32(0, to: &fctl)
        PNGChunks.appendUInt32(0, to: &fctl)
        PNGChunks.appendUInt16(UInt16(numerator), to: &fctl)
        PNGChunks.appendUInt16(UInt16(denominator), to: &fctl)
        fctl.append(contentsOf: [APNGAnimation.DisposeOp.none.rawValue, APNGAnimation.BlendOp.source.rawValue])
        return fctl
    }
}
