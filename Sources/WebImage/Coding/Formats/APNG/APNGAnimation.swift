/// The animation an APNG stream declares, read from its chunks (`acTL`, `fcTL`, `fdAT`) without
/// decoding any pixels.
///
/// Parsing checks what browsers check before they animate: chunk CRCs, sequence numbers counting
/// up from 0 over `fcTL` and `fdAT`, every frame region inside the canvas, known dispose and blend
/// operations, frame data for every frame and as many frames as `acTL` declares. Anything else
/// makes the parse fail, and ``APNGCoder`` then shows the still image, as browsers do.
///
/// A hostile file can declare 700,000 frames in 45 MB (red team, stop 50), so the walk keeps
/// nothing per chunk, records at most `recording` frames (a header read records none, a decode
/// as many as it will draw) while checking every one, and looks at `Task.isCancelled` every
/// 4,096 chunks.
struct APNGAnimation {
    enum DisposeOp: UInt8 { case none = 0, background = 1, previous = 2 }
    enum BlendOp: UInt8 { case source = 0, over = 1 }

    struct Frame {
        var x: Int, y: Int, width: Int, height: Int
        var delayNumerator: Int, delayDenominator: Int
        var dispose: DisposeOp
        var blend: BlendOp
        /// Which of the animation's ``APNGAnimation/pieces`` hold the frame's zlib stream (IDAT
        /// data, or fdAT data after its sequence number), and their bytes in all.
        var pieces: Range<Int> = 0..<0
        var dataLength = 0

        /// Delay in milliseconds; a denominator of 0 means 1/100 s (APNG specification).
        var milliseconds: Int {
            let denominator = delayDenominator == 0 ? 100 : delayDenominator
            return (delayNumerator * 1000 + denominator / 2) / denominator
        }
    }

    enum ParseError: Error {
        case invalid(String)
        case cancelled
    }

    var width: Int, height: Int
    /// The 13 bytes of IHDR, reused (with the frame's size) for each frame's stream.
    var ihdr: [UInt8]
    /// PLTE and tRNS, which every frame shares.
    var sharedChunks: [(type: UInt32, data: [UInt8])] = []
    /// The frames the parse recorded: the first `recording` of them, in order.
    private(set) var frames: [Frame] = []
    /// Where the recorded frames' data lies in the file; each frame's pieces are consecutive.
    private(set) var pieces: [Range<Int>] = []
    /// The frames the animation has (`acTL`'s count), recorded or not.
    private(set) var frameCount = 0
    /// Whether a frame's region leaves part of the canvas uncovered (transparent).
    private(set) var hasPartialFrame = false
    /// `num_plays`: 0 means forever.
    var loopCount = 0
    /// Whether the IDAT image is the first frame (an fcTL came before it).
    var defaultImageIsFirstFrame = false

    init(_ bytes: UnsafeRawBufferPointer, recording: Int = .max) throws(ParseError) {
        var walk = PNGChunks(bytes)
        guard let first = walk.next(), first.type == Self.ihdr, first.data.count == 13 else {
            throw .invalid("no IHDR chunk")
        }
        ihdr = Array(bytes[first.data])
        width = Int(PNGChunks.readUInt32(bytes, first.data.lowerBound))
        height = Int(PNGChunks.readUInt32(bytes, first.data.lowerBound + 4))
        var state = WalkState()
        var visited = 0
        while let chunk = walk.next() {
            visited += 1
            if visited & 0xFFF == 0, Task.isCancelled { throw .cancelled }
            try take(chunk, bytes, &state, recording: recording)
        }
        guard let declared = state.declaredFrames, declared > 0 else { throw .invalid("no acTL chunk") }
        guard state.seenIDAT, !walk.truncated else { throw .invalid("data ends early") }
        // A frame followed by another's fcTL had data (checked there); the last needs its own.
        guard state.seen > declared || (state.seen == declared && state.lastHasData) else {
            throw .invalid("\(state.seen) frames of \(declared)")
        }
        if frames.count > declared { frames.removeLast(frames.count - declared) }
        if defaultImageIsFirstFrame, let region = state.firstRegion, region != [0, 0, width, height] {
            throw .invalid("the default image's frame does not cover the canvas")
        }
        frameCount = declared
        hasPartialFrame = state.firstPartial.map { $0 < declared } ?? false
        loopCount = state.plays
    }

    /// What the walk knows of the frames it need not record.
    private struct WalkState {
        var declaredFrames: Int?
        var plays = 0
        var sequence: UInt32 = 0
        var seenIDAT = false, afterIDAT = false
        /// Frames seen (fcTL chunks), and whether the last one has data yet.
        var seen = 0
        var lastHasData = false
        var firstRegion: [Int]?
        /// The first frame whose region is smaller than the canvas.
        var firstPartial: Int?
    }

    // Chunk types, computed once (a walk compares millions of chunks against them).
    private static let ihdr = PNGChunks.type("IHDR"), idat = PNGChunks.type("IDAT"), actl = PNGChunks.type("acTL")
    private static let fctl = PNGChunks.type("fcTL"), fdat = PNGChunks.type("fdAT")
    private static let plte = PNGChunks.type("PLTE"), trns = PNGChunks.type("tRNS")

    private mutating func take(
        _ chunk: PNGChunks.Chunk, _ bytes: UnsafeRawBufferPointer, _ state: inout WalkState, recording: Int
    ) throws(ParseError) {
        let type = chunk.type, data = chunk.data
        if type == Self.idat {
            guard chunk.crcIsValid, !state.afterIDAT else { throw .invalid("broken IDAT sequence") }
            state.seenIDAT = true
            if defaultImageIsFirstFrame || (state.seen == 1 && !state.lastHasData) {
                defaultImageIsFirstFrame = true
                addData(data, state: &state)
            }
            return
        }
        if state.seenIDAT { state.afterIDAT = true }
        switch type {
        case Self.actl:
            guard chunk.crcIsValid, data.count == 8, !state.seenIDAT, state.declaredFrames == nil else { throw .invalid("bad acTL") }
            state.declaredFrames = Int(PNGChunks.readUInt32(bytes, data.lowerBound))
            state.plays = Int(PNGChunks.readUInt32(bytes, data.lowerBound + 4))
        case Self.fctl:
            guard chunk.crcIsValid, data.count == 26 else { throw .invalid("bad fcTL") }
            try Self.expect(&state.sequence, bytes, data.lowerBound)
            if state.seen > 0, !state.lastHasData { throw .invalid("frame without data") }
            var frame = try Self.frameControl(bytes, data.lowerBound, canvasWidth: width, canvasHeight: height)
            if state.seen == 0 { state.firstRegion = [frame.x, frame.y, frame.width, frame.height] }
            if state.firstPartial == nil, frame.width < width || frame.height < height { state.firstPartial = state.seen }
            state.seen += 1
            state.lastHasData = false
            if frames.count < recording {
                frame.pieces = pieces.count..<pieces.count
                frames.append(frame)
            }
        case Self.fdat:
            guard chunk.crcIsValid, data.count >= 4, state.seen > 0, state.seenIDAT,
                  !(defaultImageIsFirstFrame && state.seen == 1) else { throw .invalid("bad fdAT") }
            try Self.expect(&state.sequence, bytes, data.lowerBound)
            addData((data.lowerBound + 4)..<data.upperBound, state: &state)
        case Self.plte, Self.trns:
            if !state.seenIDAT { sharedChunks.append((type, Array(bytes[data]))) }
        default:
            break
        }
    }

    /// Data for the last frame seen, kept when that frame is recorded.
    private mutating func addData(_ piece: Range<Int>, state: inout WalkState) {
        state.lastHasData = true
        guard frames.count == state.seen, !frames.isEmpty else { return }
        pieces.append(piece)
        frames[frames.count - 1].pieces = frames[frames.count - 1].pieces.lowerBound..<pieces.count
        frames[frames.count - 1].dataLength += piece.count
    }

    /// Checks a sequence number and moves on to the next.
    private static func expect(_ sequence: inout UInt32, _ bytes: UnsafeRawBufferPointer, _ offset: Int) throws(ParseError) {
        guard PNGChunks.readUInt32(bytes, offset) == sequence else { throw .invalid("sequence number out of order") }
        sequence &+= 1
    }

    private static func frameControl(
        _ bytes: UnsafeRawBufferPointer, _ o: Int, canvasWidth: Int, canvasHeight: Int
    ) throws(ParseError) -> Frame {
        let width = Int(PNGChunks.readUInt32(bytes, o + 4)), height = Int(PNGChunks.readUInt32(bytes, o + 8))
        let x = Int(PNGChunks.readUInt32(bytes, o + 12)), y = Int(PNGChunks.readUInt32(bytes, o + 16))
        guard width > 0, height > 0, x + width <= canvasWidth, y + height <= canvasHeight else {
            throw .invalid("frame region outside the canvas")
        }
        guard let dispose = DisposeOp(rawValue: bytes[o + 24]), let blend = BlendOp(rawValue: bytes[o + 25]) else {
            throw .invalid("unknown dispose or blend operation")
        }
        return Frame(
            x: x, y: y, width: width, height: height,
            delayNumerator: Int(PNGChunks.readUInt16(bytes, o + 20)), delayDenominator: Int(PNGChunks.readUInt16(bytes, o + 22)),
            dispose: dispose, blend: blend)
    }
}
