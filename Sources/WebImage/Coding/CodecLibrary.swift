import CCodecLoader

/// The codec libraries opened on first use rather than at process start: libavif, libheif and
/// libjxl bring about thirty shared objects (AV1, HEVC, Highway, Brotli) whose loading and
/// start-up code cost a `webimage` run more than everything else it does before its first
/// request. Their coders ask ``check()`` before their first call into the library.
///
/// `WEBIMAGE_DISABLE_CODECS=avif,heif,jxl` (any of them) keeps a library closed for the
/// process: operators who do not want to expose a decoder to untrusted input switch it off, and
/// its formats then fail with `libraryUnavailable`.
enum CodecLibrary: Sendable {
    case avif, heif, jxl

    /// `nil` once the library is open; otherwise why it cannot be.
    var unavailableReason: String? {
        let message = switch self {
        case .avif: webimage_load_avif()
        case .heif: webimage_load_heif()
        case .jxl: webimage_load_jxl()
        }
        return message.map { String(cString: $0) }
    }

    /// Throws unless the library is open, for a decoder of `format`.
    func checkDecoding(_ format: ImageFormat) throws(ImageDecodingError) {
        if let reason = unavailableReason { throw .libraryUnavailable(format: format, reason: reason) }
    }

    /// Throws unless the library is open, for an encoder of `format`.
    func checkEncoding(_ format: ImageFormat) throws(ImageEncodingError) {
        if let reason = unavailableReason { throw .libraryUnavailable(format: format, reason: reason) }
    }
}
