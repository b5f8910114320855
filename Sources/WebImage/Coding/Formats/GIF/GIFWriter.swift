public import Foundation

/// Writes GIF files frame by frame from palette indices, over giflib's encoder.
///
/// The low-level half of ``GIFCoder``'s encoder, public so tools and tests can write exactly
/// the GIF they mean: partial frames, local or global palettes, each disposal method,
/// interlacing and a NETSCAPE2.0 loop count.
///
/// ```swift
/// var writer = GIFWriter(width: 2, height: 1, globalPalette: [255, 0, 0, 0, 0, 255])
/// writer.frames.append(.init(left: 0, top: 0, width: 2, height: 1, indices: [0, 1]))
/// let data = try writer.encode()
/// ```
public struct GIFWriter: Sendable {
    /// What happens to a frame's rectangle before the next frame is drawn.
    public enum Disposal: Int32, Sendable {
        case unspecified = 0, none = 1, background = 2, previous = 3
    }

    /// One image: a rectangle of palette indices and how it is shown.
    public struct Frame: Sendable {
        public var left, top, width, height: Int
        /// `width * height` palette indices, top row first (the writer interlaces them if asked).
        public var indices: [UInt8]
        /// Local palette as RGB triples (at most 256 colours); `nil` uses the global one.
        public var palette: [UInt8]?
        public var transparentIndex: Int?
        public var disposal: Disposal
        public var delayCentiseconds: Int
        public var interlaced: Bool

        public init(
            left: Int, top: Int, width: Int, height: Int, indices: [UInt8], palette: [UInt8]? = nil,
            transparentIndex: Int? = nil, disposal: Disposal = .none, delayCentiseconds: Int = 0, interlaced: Bool = false
        ) {
            self.left = left; self.top = top; self.width = width; self.height = height
            self.indices = indices
            self.palette = palette
            self.transparentIndex = transparentIndex
            self.disposal = disposal
            self.delayCentiseconds = delayCentiseconds
            self.interlaced = interlaced
        }
    }

    public var width: Int
    public var height: Int
    /// Global palette as RGB triples, or `nil` when every frame has its own.
    public var globalPalette: [UInt8]?
    /// Written as a NETSCAPE2.0 extension when set (0 = loop forever).
    public var loopCount: Int?
    public var frames: [Frame]

    public init(width: Int, height: Int, globalPalette: [UInt8]? = nil, loopCount: Int? = nil, frames: [Frame] = []) {
        self.width = width
        self.height = height
        self.globalPalette = globalPalette
        self.loopCount = loopCount
        self.frames = frames
    }

    /// The GIF file.
    public func encode() throws(ImageEncodingError) -> Data {
        let file = try GIFFileWriter(width: width, height: height, globalPalette: globalPalette, loopCount: loopCount)
        guard !frames.isEmpty else { throw .encodingFailed(format: .gif, reason: "no frames") }
        for frame in frames {
            guard !Task.isCancelled else { throw .cancelled }
            try file.put(frame)
        }
        return try file.finish()
    }
}
