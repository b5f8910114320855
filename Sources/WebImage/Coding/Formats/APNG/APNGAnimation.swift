/// The animation an APNG stream declares, read from its chunks (`acTL`, `fcTL`, `fdAT`) without
/// decoding any pixels.
///
/// Parsing checks what browsers check before they animate: chunk CRCs, sequence numbers counting
/// up from 0 over `fcTL` and `fdAT`, every frame region inside the canvas, known dispose and blend
/// operations, frame data for every frame and as many frames as `acTL` declares. Anything else
/// makes the parse fail, and ``APNGCoder`` then shows the still image, as browsers do.
struct APNGAnimation {
    enum DisposeOp: UInt8 { case none = 0, background = 1, previous = 2 }
    enum BlendOp: UInt8 { case source = 0, over = 1 }

    struct Frame {
        var x: Int, y: Int, width: Int, height: Int
        var delayNumerator: Int, delayDenominator: Int
        var dispose: DisposeOp
        var blend: BlendOp
        /// The zlib stream of the frame, in pieces (IDAT data, or fdAT data after its sequence number).
        var data: [Range<Int>] = []

        /// Delay in milliseconds; a denominator of 0 means 1/100 s (APNG specification).
        var milliseconds: Int {
            let denominator = delayDenominator == 0 ? 100 : delayDenominator
            return (delayNumerator * 1000 + denominator / 2) / denominator
        }
    }

    struct ParseError: Error { var reason: String }

    var width: Int, height: Int
    /// The 13 bytes of IHDR, reused (with the frame's size) for each frame's stream.
    var ihdr: [UInt8]
    /// PLTE and tRNS, which every frame shares.
    var sharedChunks: [(type: UInt32, data: [UInt8])] = []
    var frames: [Frame] = []
    /// `num_plays`: 0 means forever.
    var loopCount: Int
    /// Whether the IDAT image is the first frame (an fcTL came before it).
    var defaultImageIsFirstFrame = false

    init(_ bytes: UnsafeRawBufferPointer) throws(ParseError) {
        let walk = PNGChunks(bytes)
        let chunks = walk.chunks
        guard let first = chunks.first, first.type == PNGChunks.type("IHDR"), first.data.count == 13 else {
            throw ParseError(reason: "no IHDR chunk")
        }
        ihdr = Array(bytes[first.data])
        width = Int(PNGChunks.readUInt32(bytes, first.data.lowerBound))
        height = Int(PNGChunks.readUInt32(bytes, first.data.lowerBound + 4))
        var declaredFrames: Int?
        var plays = 0
        var sequence: UInt32 = 0
        var seenIDAT = false, afterIDAT = false
        for chunk in chunks.dropFirst() {
            let type = chunk.type, data = chunk.data
            if type == PNGChunks.type("IDAT") {
                guard chunk.crcIsValid, !afterIDAT else { throw ParseError(reason: "broken IDAT sequence") }
                seenIDAT = true
                if defaultImageIsFirstFrame || (!frames.isEmpty && frames.count == 1 && frames[0].data.isEmpty) {
                    defaultImageIsFirstFrame = true
                    frames[0].data.append(data)
                }
                continue
            }
            if seenIDAT { afterIDAT = true }
            switch type {
            case PNGChunks.type("acTL"):
                guard chunk.crcIsValid, data.count == 8, !seenIDAT, declaredFrames == nil else { throw ParseError(reason: "bad acTL") }
                declaredFrames = Int(PNGChunks.readUInt32(bytes, data.lowerBound))
                plays = Int(PNGChunks.readUInt32(bytes, data.lowerBound + 4))
            case PNGChunks.type("fcTL"):
                guard chunk.crcIsValid, data.count == 26 else { throw ParseError(reason: "bad fcTL") }
                try Self.expect(&sequence, bytes, data.lowerBound)
                if let last = frames.last, last.data.isEmpty { throw ParseError(reason: "frame without data") }
                frames.append(try Self.frameControl(bytes, data.lowerBound, canvasWidth: width, canvasHeight: height))
            case PNGChunks.type("fdAT"):
                guard chunk.crcIsValid, data.count >= 4, !frames.isEmpty, seenIDAT,
                      !(defaultImageIsFirstFrame && frames.count == 1) else { throw ParseError(reason: "bad fdAT") }
                try Self.expect(&sequence, bytes, data.lowerBound)
                frames[frames.count - 1].data.append((data.lowerBound + 4)..<data.upperBound)
            case PNGChunks.type("PLTE"), PNGChunks.type("tRNS"):
                if !seenIDAT { sharedChunks.append((type, Array(bytes[data]))) }
            default:
                break
            }
        }
        guard let declaredFrames, declaredFrames > 0 else { throw ParseError(reason: "no acTL chunk") }
        guard seenIDAT, !walk.truncated else { throw ParseError(reason: "data ends early") }
        guard frames.count >= declaredFrames, frames[declaredFrames - 1].data.count > 0 else {
            throw ParseError(reason: "\(frames.count) frames of \(declaredFrames)")
        }
        frames.removeLast(frames.count - declaredFrames)
        if defaultImageIsFirstFrame, frames[0].x != 0 || frames[0].y != 0 || frames[0].width != width || frames[0].height != height {
            throw ParseError(reason: "the default image's frame does not cover the canvas")
        }
        loopCount = plays
    }

    /// Checks a sequence number and moves on to the next.
    private static func expect(_ sequence: inout UInt32, _ bytes: UnsafeRawBufferPointer, _ offset: Int) throws(ParseError) {
        guard PNGChunks.readUInt32(bytes, offset) == sequence else { throw ParseError(reason: "sequence number out of order") }
        sequence &+= 1
    }

    private static func frameControl(
        _ bytes: UnsafeRawBufferPointer, _ o: Int, canvasWidth: Int, canvasHeight: Int
    ) throws(ParseError) -> Frame {
        let width = Int(PNGChunks.readUInt32(bytes, o + 4)), height = Int(PNGChunks.readUInt32(bytes, o + 8))
        let x = Int(PNGChunks.readUInt32(bytes, o + 12)), y = Int(PNGChunks.readUInt32(bytes, o + 16))
        guard width > 0, height > 0, x + width <= canvasWidth, y + height <= canvasHeight else {
            throw ParseError(reason: "frame region outside the canvas")
        }
        guard let dispose = DisposeOp(rawValue: bytes[o + 24]), let blend = BlendOp(rawValue: bytes[o + 25]) else {
            throw ParseError(reason: "unknown dispose or blend operation")
        }
        return Frame(
            x: x, y: y, width: width, height: height,
            delayNumerator: Int(PNGChunks.readUInt16(bytes, o + 20)), delayDenominator: Int(PNGChunks.readUInt16(bytes, o + 22)),
            dispose: dispose, blend: blend)
    }
}
