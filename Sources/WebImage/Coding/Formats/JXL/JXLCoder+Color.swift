internal import CJxl
import Foundation

extension JXLCoder {
    /// The colour space of the pixels libjxl hands out (`JXL_COLOR_PROFILE_TARGET_DATA`) as an
    /// ICC profile: the embedded profile, or the one libjxl synthesises from the codestream's
    /// colour encoding (sRGB, Display P3, BT.2020, linear, gamma …). Only the headers are read.
    /// A file libjxl cannot read that far states nothing (decoding reports the error).
    static func statedColor(_ data: Data) -> EmbeddedColor.ICCBytes {
        let stated = try? withInput(data) { bytes throws(ImageDecodingError) -> EmbeddedColor.ICCBytes in
            let decoder = try Session(bytes, events: JXL_DEC_COLOR_ENCODING.rawValue)
            while true {
                switch try decoder.next() {
                case JXL_DEC_COLOR_ENCODING:
                    var size = 0
                    guard JxlDecoderGetICCProfileSize(decoder.handle, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
                          size > 0 else { return .none }
                    guard size <= ColorProfile.maxByteCount else { return .damaged }
                    var icc = Data(count: size)
                    let status = icc.withUnsafeMutableBytes {
                        JxlDecoderGetColorAsICCProfile(
                            decoder.handle, nil, JXL_COLOR_PROFILE_TARGET_DATA, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), size)
                    }
                    return status == JXL_DEC_SUCCESS ? .bytes(icc) : .damaged
                case JXL_DEC_SUCCESS:
                    return .none
                default:
                    continue
                }
            }
        }
        return stated ?? .none
    }
}
