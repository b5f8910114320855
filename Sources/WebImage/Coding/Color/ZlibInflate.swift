import CZlib
import Foundation

/// Inflates a zlib stream with a limit on the output, checked as it grows: a few kilobytes that
/// inflate to gigabytes (a zip bomb in a PNG chunk) stop at the limit.
enum ZlibInflate {
    /// The inflated bytes, or `nil` when the stream is damaged, incomplete or inflates past `maxBytes`.
    static func inflate(_ compressed: Data, maxBytes: Int) -> Data? {
        guard !compressed.isEmpty, let inputCount = UInt32(exactly: compressed.count) else { return nil }
        var stream = z_stream()
        guard webimage_inflate_init(&stream) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = [UInt8](compressed)
        return input.withUnsafeMutableBufferPointer { source -> Data? in
            stream.next_in = source.baseAddress
            stream.avail_in = inputCount
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { target -> Int32 in
                    stream.next_out = target.baseAddress
                    stream.avail_out = UInt32(target.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                guard output.count + produced <= maxBytes else { return nil }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END: return output
                case Z_OK: if produced == 0 && stream.avail_in == 0 { return nil }  // the stream ends early
                default: return nil
                }
            }
        }
    }
}
