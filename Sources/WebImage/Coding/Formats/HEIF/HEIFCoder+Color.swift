internal import CHeif
import Foundation

extension HEIFCoder {
    /// The colour the primary image's `colr` box states, as libheif parses it (no decoding):
    /// an ICC profile (`prof` or `rICC`), else `nclx` primaries and transfer (see
    /// ``ColorDescription/nclx(primaries:transfer:)``). A file libheif cannot parse states nothing.
    static func statedColor(_ data: Data) -> EmbeddedColor.ICCBytes {
        let stated = try? withPrimaryImage(data) { handle, _ throws(ImageDecodingError) -> EmbeddedColor.ICCBytes in
            switch heif_image_handle_get_color_profile_type(handle) {
            case heif_color_profile_type_prof, heif_color_profile_type_rICC:
                let size = heif_image_handle_get_raw_color_profile_size(handle)
                guard size > 0 else { return .none }
                guard size <= ColorProfile.maxByteCount else { return .damaged }
                var bytes = Data(count: size)
                let error = bytes.withUnsafeMutableBytes { heif_image_handle_get_raw_color_profile(handle, $0.baseAddress) }
                return error.code == heif_error_Ok ? .bytes(bytes) : .damaged
            case heif_color_profile_type_nclx:
                var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
                guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else { return .none }
                defer { heif_nclx_color_profile_free(nclx) }
                return ColorDescription.nclx(
                    primaries: Int(nclx.pointee.color_primaries.rawValue),
                    transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
            default:
                return .none
            }
        }
        return stated ?? .none
    }
}
