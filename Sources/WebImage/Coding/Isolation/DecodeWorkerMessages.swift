import Foundation

/// What passes between a server and its decode worker: a request in (the options, then the
/// encoded bytes) and a reply out (the image's description, then its pixels), each description
/// JSON behind a 4-byte little-endian length.
///
/// The reply is read as untrusted: a worker runs a C decoder over a stranger's bytes, so the
/// sizes it reports are checked against the request's pixel limit before the server allocates
/// anything (``DecodeWorkerReply/checked(against:)``).
enum DecodeWorkerWire {
    /// Changed with any change of the messages: a server and a worker of different builds refuse
    /// each other instead of misreading (a worker is normally the server's own executable).
    static let version = 2
    /// The longest description accepted: two ICC profiles of ``ColorProfile/maxByteCount``,
    /// base64, and room for the rest.
    static let maxDescriptionBytes = 48 << 20

    /// `value` as JSON behind its length.
    static func framed(_ value: some Encodable) throws -> Data {
        let json = try JSONEncoder().encode(value)
        var length = UInt32(json.count).littleEndian
        var framed = Data(bytes: &length, count: 4)
        framed.append(json)
        return framed
    }

    /// The length of a description from its 4-byte prefix, `nil` when over the limit.
    static func descriptionLength(_ prefix: Data) -> Int? {
        guard prefix.count == 4 else { return nil }
        let length = prefix.enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        return length <= maxDescriptionBytes ? length : nil
    }
}

/// The options of one decode, as the worker needs them.
struct DecodeWorkerRequest: Codable {
    var version = DecodeWorkerWire.version
    var format: ImageFormat
    var maxPixelCount: Int
    var scale: Double
    var firstFrameOnly: Bool
    var thumbnailMaxPixelSize: Int?
    var strict: Bool
    var maxDecodedBytes: Int?
    var maxFrameCount: Int
    var colorHandling: ColorHandling
    /// Bytes of memory the decode may take past what the worker held at its request (``WorkerMemory``).
    var memoryLimit: Int?
    /// Set for an encode (to `format`) instead of a decode: the image's description.
    var encode: EncodeOrder?

    init(format: ImageFormat, options: ImageDecodingOptions, memoryLimit: Int? = nil) {
        self.format = format
        self.memoryLimit = memoryLimit
        maxPixelCount = options.maxPixelCount
        scale = options.scale
        firstFrameOnly = options.firstFrameOnly
        thumbnailMaxPixelSize = options.thumbnailMaxPixelSize
        strict = options.strict
        maxDecodedBytes = options.maxDecodedBytes
        maxFrameCount = options.maxFrameCount
        colorHandling = options.colorHandling
    }

    var options: ImageDecodingOptions {
        var options = ImageDecodingOptions(
            maxPixelCount: maxPixelCount, scale: scale, firstFrameOnly: firstFrameOnly,
            thumbnailMaxPixelSize: thumbnailMaxPixelSize, strict: strict)
        options.maxDecodedBytes = maxDecodedBytes
        options.maxFrameCount = maxFrameCount
        options.colorHandling = colorHandling
        return options
    }
}

/// A decoded image without its pixels (which follow the description: the still's rows, or each
/// frame's, in order), or the typed error the decode ended with.
struct DecodeWorkerReply: Codable {
    struct Frame: Codable { var duration: Duration }

    var version = DecodeWorkerWire.version
    var error: DecodeWorkerFailure?
    var format: ImageFormat = .png
    var pixelWidth = 0
    var pixelHeight = 0
    var bytesPerRow = 0
    var isOpaque = true
    var scale = 1.0
    var orientation = ImageOrientation.up
    var frameCount = 1
    var frames: [Frame] = []
    var loopCount = 0
    var repairs: ImageRepairs = []
    var colorProfile: Data?
    var sourceColorProfile: Data?

    init(error: ImageDecodingError) { self.error = DecodeWorkerFailure(error) }

    init(_ image: Image) {
        format = image.format
        pixelWidth = image.pixelWidth
        pixelHeight = image.pixelHeight
        bytesPerRow = image.bytesPerRow
        isOpaque = image.isOpaque
        scale = image.scale
        orientation = image.orientation
        frameCount = image.frameCount
        frames = image.frames.map { Frame(duration: $0.duration) }
        loopCount = image.loopCount
        repairs = image.repairs
        colorProfile = image.colorProfile?.data
        sourceColorProfile = image.sourceColorProfile?.data
    }

    /// The byte counts of the pixel arrays that follow, once the sizes are checked against what
    /// `options` allow: every frame within the pixel limit, rows no wider than the pixels
    /// need (and a little alignment), no arithmetic that could trap.
    func checked(against options: ImageDecodingOptions) throws(ImageDecodingError) -> [Int] {
        let frameTotal = max(frames.count, 1)
        let (area, o1) = pixelWidth.multipliedReportingOverflow(by: pixelHeight)
        let (all, o2) = area.multipliedReportingOverflow(by: frameTotal)
        let (tight, o3) = pixelWidth.multipliedReportingOverflow(by: 4)
        let (still, o4) = bytesPerRow.multipliedReportingOverflow(by: pixelHeight)
        guard pixelWidth > 0, pixelHeight > 0, !o1, !o2, !o3, !o4, all <= options.maxPixelCount,
              frames.count <= options.framesToDecode(of: frameCount),
              bytesPerRow >= tight, bytesPerRow - tight < 256, frames.isEmpty || bytesPerRow == tight
        else {
            throw .corrupt(format: format, reason: "the decode worker reported an image of \(pixelWidth) × \(pixelHeight) × \(frames.count) frames, outside the request's limits")
        }
        return frames.isEmpty ? [still] : Array(repeating: still, count: frames.count)
    }

    /// The image these arrays of pixels (one per ``checked(against:)`` count) make.
    func image(pixels arrays: [[UInt8]]) -> Image {
        var image = Image(
            format: format, pixelWidth: pixelWidth, pixelHeight: pixelHeight, bytesPerRow: bytesPerRow,
            pixels: arrays.first ?? [], isOpaque: isOpaque, scale: scale, orientation: orientation, frameCount: frameCount)
        image.frames = zip(frames, arrays).map { ImageFrame(pixels: $1, duration: $0.duration) }
        image.loopCount = loopCount
        image.repairs = repairs
        image.colorProfile = colorProfile.flatMap(ColorProfile.init(iccData:))
        image.sourceColorProfile = sourceColorProfile.flatMap(ColorProfile.init(iccData:))
        return image
    }
}

/// An ``ImageDecodingError`` on the wire (its typed cases kept: a pixel limit stays a pixel limit).
struct DecodeWorkerFailure: Codable {
    var kind: String
    var format: ImageFormat?
    var numbers: [Int] = []
    var repairs: ImageRepairs = []
    var reason = ""

    init(_ error: ImageDecodingError) {
        switch error {
        case .empty: kind = "empty"
        case .unsupportedFormat(let format): kind = "unsupportedFormat"; self.format = format
        case let .tooManyPixels(width, height, frames, limit): kind = "tooManyPixels"; numbers = [width, height, frames, limit]
        case let .corrupt(format, reason): kind = "corrupt"; self.format = format; self.reason = reason
        case let .refusedInStrictMode(format, repairs, reason):
            kind = "refusedInStrictMode"; self.format = format; self.repairs = repairs; self.reason = reason
        case let .libraryUnavailable(format, reason): kind = "libraryUnavailable"; self.format = format; self.reason = reason
        case .cancelled: kind = "cancelled"
        case .workerKilled(let format): kind = "workerKilled"; self.format = format
        }
    }

    func error(decoding format: ImageFormat) -> ImageDecodingError {
        let format = self.format ?? format
        switch kind {
        case "empty": return .empty
        case "unsupportedFormat": return .unsupportedFormat(self.format)
        case "tooManyPixels" where numbers.count == 4:
            return .tooManyPixels(width: numbers[0], height: numbers[1], frames: numbers[2], limit: numbers[3])
        case "refusedInStrictMode": return .refusedInStrictMode(format: format, repairs: repairs, reason: reason)
        case "libraryUnavailable": return .libraryUnavailable(format: format, reason: reason)
        case "cancelled": return .cancelled
        case "workerKilled": return .workerKilled(format: format)
        default: return .corrupt(format: format, reason: reason.isEmpty ? "the decode worker failed" : reason)
        }
    }
}
