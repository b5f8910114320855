import Foundation

/// A built-in encoder whose larger encodes run in a ``DecodeIsolation`` worker: libavif's and
/// libheif's encoders (libaom, x265) have no way to stop inside a frame, and take seconds for a
/// large picture (about 0.8 s a megapixel for AVIF at speed 8 here), so a render whose deadline
/// passed would otherwise keep a core busy until the file is written. A cancel kills the worker.
/// Lossless WebP goes too: libwebp's progress hook is not called while it computes its backward
/// references (0.75 s of CPU after a cancel at 9 MP was measured); lossy WebP stays, its hook
/// being called every macroblock row.
/// Animations given frame by frame (``animatedEncoder(as:_:)``) stay in the process: they stop
/// between frames, and lossy WebP inside them. A caller that needs a lossless WebP animation to
/// stop at once hands over all its frames in one ``Image`` instead (`serve` does).
struct IsolatedEncoder: ImageEncoding {
    let encoder: any ImageEncoding
    let isolation: DecodeIsolation

    func canEncode(_ format: ImageFormat) -> Bool { encoder.canEncode(format) }

    func encode(_ image: Image, as format: ImageFormat, quality: Double) throws(ImageEncodingError) -> Data {
        guard isolates(pixelCount: Self.pixelCount(image), as: format, quality: quality) else {
            return try encoder.encode(image, as: format, quality: quality)
        }
        guard !Task.isCancelled else { throw .cancelled }
        return try EncodeWorkerCall(worker: isolation.worker, format: format, keepsSpare: isolation.keepsSpareWorker).encode(image, quality: quality)
    }

    func animatedEncoder(as format: ImageFormat, _ parameters: AnimationEncodingParameters) throws(ImageEncodingError) -> (any AnimatedImageEncoding)? {
        try encoder.animatedEncoder(as: format, parameters)
    }

    /// Whether an encode of `pixelCount` pixels (over the frames) goes to the worker: at least
    /// ``DecodeIsolation/minimumEncodePixelCount``, and for WebP only a lossless one.
    func isolates(pixelCount: Int, as format: ImageFormat, quality: Double) -> Bool {
        pixelCount >= isolation.minimumEncodePixelCount && (format != .webp || quality >= 1)
    }

    /// `image`'s pixels over its frames (`Int.max` when that overflows).
    static func pixelCount(_ image: Image) -> Int {
        let (area, o1) = max(image.pixelWidth, 0).multipliedReportingOverflow(by: max(image.pixelHeight, 0))
        let (pixels, o2) = area.multipliedReportingOverflow(by: max(image.frames.count, 1))
        return o1 || o2 ? .max : pixels
    }
}
