internal import CJPEGIncremental
import Foundation

extension JPEGCoder {
    /// What libjpeg reported about a decode that was not clean, as TurboJPEG reports it: whether
    /// it warned (sticky, like `TJERR_WARNING`) and the first warning's text, or the error's.
    struct RowsProblem {
        var warned: Bool
        var message: String
    }

    /// libjpeg's limit on progressive scans (TurboJPEG's `TJFLAG_LIMITSCANS`): a file of thousands
    /// of tiny scans costs a pass over the whole image each.
    static let maxScans: Int32 = 500

    /// Decodes `data` into `out` (`height` rows of `width` × 4 bytes: RGBA, or CMYK when `cmyk`)
    /// at the DCT scaling factor `scale`, a batch of rows at a time, with the settings of
    /// TurboJPEG's `tjDecompress2` (the same pixels). `Task.isCancelled` is looked at before the
    /// decode, between rows of a progressive file's input and after every 4 MB of output: a
    /// request whose deadline passed stops within milliseconds and throws
    /// ``ImageDecodingError/cancelled``. Returns nil for a clean decode; a problem otherwise
    /// (after an error the rows not reached are left as they were).
    static func decodeRows(
        _ data: Data, into out: UnsafeMutableRawBufferPointer, width: Int, height: Int,
        scale: (num: Int32, denom: Int32), cmyk: Bool
    ) throws(ImageDecodingError) -> RowsProblem? {
        if Task.isCancelled { throw .cancelled }
        guard let decoder = wi_jpeg_rows_create() else { throw .corrupt(format: .jpeg, reason: "cannot create decoder") }
        defer { wi_jpeg_rows_destroy(decoder) }
        let rowBytes = width * 4
        guard let base = out.baseAddress, width > 0, height > 0, out.count >= rowBytes * height, !data.isEmpty else {
            throw .corrupt(format: .jpeg, reason: "no room for the image")
        }
        func problem() -> RowsProblem {
            let message = String(cString: wi_jpeg_rows_message(decoder))
            return RowsProblem(warned: wi_jpeg_rows_warned(decoder) != 0, message: message.isEmpty ? "libjpeg gave no rows" : message)
        }
        func run(_ src: UnsafeRawBufferPointer) throws(ImageDecodingError) -> RowsProblem? {
            var outWidth: Int32 = 0, outHeight: Int32 = 0
            let started = wi_jpeg_rows_start(
                decoder, src.baseAddress!.assumingMemoryBound(to: UInt8.self), src.count, scale.num, scale.denom,
                cmyk ? 1 : 0, maxScans, { Task.isCancelled ? 1 : 0 }, &outWidth, &outHeight)
            switch started {
            case WI_JPEG_ROWS_STOPPED: throw .cancelled
            case WI_JPEG_ROWS_OK: break
            default: return problem()
            }
            guard Int(outWidth) == width, Int(outHeight) == height else {
                throw .corrupt(format: .jpeg, reason: "decoded size \(outWidth)x\(outHeight) is not the header's \(width)x\(height)")
            }
            let batch = max(1, (1 << 22) / rowBytes)
            var row = 0
            while row < height {
                if Task.isCancelled { throw .cancelled }
                let target = (base + row * rowBytes).assumingMemoryBound(to: UInt8.self)
                let read = wi_jpeg_rows_read(decoder, target, rowBytes, Int32(min(batch, height - row)))
                guard read > 0 else { return problem() }
                row += Int(read)
            }
            if wi_jpeg_rows_finish(decoder) != WI_JPEG_ROWS_OK { return problem() }
            return wi_jpeg_rows_warned(decoder) != 0 ? problem() : nil
        }
        // The data stays alive (and unmoved) for the whole decode: libjpeg reads it until finish.
        return try data.withUnsafeBytes { src in
            Result { () throws(ImageDecodingError) -> RowsProblem? in try run(src) }
        }.get()
    }
}
