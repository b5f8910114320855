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
                    if let hdr = hdrEncoding(decoder.handle) { return hdr }
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

    /// A PQ or HLG encoding with a built-in gamut (BT.709, BT.2100, P3): the same H.273 code
    /// points AVIF's `nclx` states (JPEG XL numbers them alike), so it is tone-mapped to SDR like
    /// AVIF (``HDRToneMapping``). libjxl 0.7's own ICC for these curves puts 10,000 nits at
    /// white: reference white (203 nits) came out at 39 of 255, a dark picture.
    static func hdrEncoding(_ handle: OpaquePointer) -> EmbeddedColor.ICCBytes? {
        var encoding = JxlColorEncoding()
        guard JxlDecoderGetColorAsEncodedProfile(handle, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS,
              encoding.color_space == JXL_COLOR_SPACE_RGB,
              encoding.transfer_function == JXL_TRANSFER_FUNCTION_PQ || encoding.transfer_function == JXL_TRANSFER_FUNCTION_HLG
        else { return nil }
        let primaries: Int
        switch (encoding.primaries, encoding.white_point) {
        case (JXL_PRIMARIES_SRGB, JXL_WHITE_POINT_D65): primaries = 1
        case (JXL_PRIMARIES_2100, JXL_WHITE_POINT_D65): primaries = 9
        case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_D65): primaries = 12
        case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_DCI): primaries = 11
        default: return nil  // custom primaries or white: libjxl's ICC, as before
        }
        return ColorDescription.nclx(primaries: primaries, transfer: Int(encoding.transfer_function.rawValue))
    }
}
