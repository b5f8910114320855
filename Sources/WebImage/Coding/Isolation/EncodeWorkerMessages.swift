import Foundation

/// What an isolated encode sends: the output format's quality and the image's description (its
/// pixels follow the request's description, one array per frame, as a decode's reply sends them).
struct EncodeOrder: Codable {
    var quality: Double
    var image: DecodeWorkerReply
}

/// An encode's reply: the file's length (its bytes follow) or the reason it failed.
struct EncodeWorkerReply: Codable {
    var version = DecodeWorkerWire.version
    var byteCount = 0
    /// `cancelled`, or a failure's description.
    var error: String?
    var cancelled = false

    init(byteCount: Int) { self.byteCount = byteCount }

    init(error: ImageEncodingError) {
        cancelled = error == .cancelled
        self.error = "\(error)"
    }

    /// The longest file accepted from a worker for `image`: twice its pixels' bytes and 1 MB
    /// (an AVIF or HEIF file is far smaller; the worker's reply is not trusted).
    static func maxByteCount(for image: Image) -> Int {
        let (pixels, o1) = image.pixels.count.multipliedReportingOverflow(by: max(image.frames.count, 1))
        let (twice, o2) = pixels.multipliedReportingOverflow(by: 2)
        let (limit, o3) = twice.addingReportingOverflow(1 << 20)
        return o1 || o2 || o3 ? .max : limit
    }
}
