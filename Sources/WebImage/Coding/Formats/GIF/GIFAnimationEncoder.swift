public import Foundation

/// A GIF written one frame at a time: the ``AnimatedImageEncoding`` of ``GIFCoder``.
///
/// Each frame is quantized (`GIFPalette`: exact up to 255 colours, else median cut; alpha
/// below 128 becomes the transparent index) and written full-canvas with its own palette. A
/// frame's disposal depends on the frame after it — *background* when that one has transparent
/// pixels (so the earlier frame does not show through), *none* otherwise; the last frame's
/// follows the first, which comes after it when the animation loops — so one frame's indices
/// wait until the next is added. Holds that frame's indices (one byte a pixel) and the file.
///
/// ```swift
/// let encoder = try GIFAnimationEncoder(AnimationEncodingParameters(pixelWidth: 2, pixelHeight: 2, loopCount: 0))
/// try encoder.add(ImageFrame(pixels: red, duration: .milliseconds(100)))
/// let gif = try encoder.finish()
/// ```
public final class GIFAnimationEncoder: AnimatedImageEncoding {
    public let format = ImageFormat.gif
    public private(set) var frameCount = 0
    private let parameters: AnimationEncodingParameters
    private var file: GIFFileWriter?
    private var pending: GIFWriter.Frame?
    private var firstIsTransparent = false

    /// Starts the file. `animated: false` writes no loop count (a one-frame GIF, as for a still ``Image``).
    public init(_ parameters: AnimationEncodingParameters, animated: Bool = true) throws(ImageEncodingError) {
        try parameters.checkSides(.gif, maxSide: 65_535)
        self.parameters = parameters
        file = try GIFFileWriter(
            width: parameters.pixelWidth, height: parameters.pixelHeight, globalPalette: nil,
            loopCount: animated ? parameters.loopCount : nil)
    }

    public func add(_ frame: ImageFrame) throws(ImageEncodingError) {
        guard !Task.isCancelled else { throw .cancelled }
        if let problem = frame.encodingProblem(parameters) { throw .encodingFailed(format: .gif, reason: problem) }
        let still = Image(
            format: .gif, pixelWidth: parameters.pixelWidth, pixelHeight: parameters.pixelHeight, pixels: frame.pixels,
            isOpaque: PixelOperations.isOpaque(frame.pixels))
        let (palette, indices, transparent) = try GIFPalette.quantize(still)
        // GIF's delays are 16-bit centiseconds: 0…655,350 ms (the rounding below stays in range).
        let milliseconds = frame.duration.wholeMilliseconds(clampedTo: 0...655_350)
        let next = GIFWriter.Frame(
            left: 0, top: 0, width: parameters.pixelWidth, height: parameters.pixelHeight, indices: indices,
            palette: palette, transparentIndex: transparent, disposal: .none, delayCentiseconds: (milliseconds + 5) / 10)
        if frameCount == 0 { firstIsTransparent = transparent != nil }
        try flush(before: transparent != nil)
        pending = next
        frameCount += 1
    }

    public func finish() throws(ImageEncodingError) -> Data {
        guard frameCount > 0 else { throw .encodingFailed(format: .gif, reason: "no frames") }
        try flush(before: firstIsTransparent)
        guard let file else { throw .encodingFailed(format: .gif, reason: "the file is finished") }
        self.file = nil
        return try file.finish()
    }

    /// Writes the waiting frame, cleared after it shows when the frame that follows has transparency.
    private func flush(before transparent: Bool) throws(ImageEncodingError) {
        guard var frame = pending else { return }
        guard let file else { throw .encodingFailed(format: .gif, reason: "the file is finished") }
        pending = nil
        frame.disposal = transparent ? .background : .none
        try file.put(frame)
    }
}
