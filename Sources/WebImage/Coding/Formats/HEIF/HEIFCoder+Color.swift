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
                let error = heif_image_handle_get_nclx_color_profile(handle, &nclx)
                // libheif allocates the profile before it checks the values, and returns it with an
                // error for a code it does not know: freed whatever the error (a fuzzed file leaked
                // 52 bytes per decode before).
                defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
                guard error.code == heif_error_Ok, let nclx else { return .none }
                return ColorDescription.nclx(
                    primaries: Int(nclx.pointee.color_primaries.rawValue),
                    transfer: Int(nclx.pointee.transfer_characteristics.rawValue))
            default:
                return .none
            }
        }
        return stated ?? .none
    }

    /// Straight RGBA8 of a decoded `heif_chroma_interleaved_RRGGBBAA_LE` image (`opaque`:
    /// `_RRGGBB_LE`, no alpha), 10 or 12 bits in each 16-bit word, converted by `conversion`
    /// before it is narrowed. RGBA is widened to 16 bits and converted in libheif's own plane
    /// (`premultiplied`: the file's samples are, and alpha is divided out at 16 bits first);
    /// RGB is copied into an RGBA16 buffer first.
    static func convertedRGBA(
        _ image: OpaquePointer, width: Int, height: Int, format: ImageFormat, opaque: Bool, premultiplied: Bool,
        _ conversion: WideColorConversion
    ) throws(ImageDecodingError) -> [UInt8] {
        var stride: Int32 = 0
        let bits = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved))
        let channels = opaque ? 3 : 4
        // width × height was checked against the header's area, so 8 × width cannot overflow.
        guard let plane = heif_image_get_plane(image, heif_channel_interleaved, &stride), Int(stride) >= width * 2 * channels,
              Int(bitPattern: plane) % 2 == 0, (9...16).contains(bits) else {
            throw .corrupt(format: format, reason: "no 16-bit RGB plane")
        }
        let rowBytes = Int(stride)
        guard opaque else {
            WideColorConversion.widen(plane, stride: rowBytes, samplesPerRow: 4 * width, height: height, bits: bits)
            if premultiplied { WideColorConversion.unpremultiply(plane, stride: rowBytes, width: width, height: height) }
            return conversion.convertNarrowing(plane, stride: rowBytes, width: width, height: height)
        }
        return try conversion.decode(width: width, height: height) { out throws(ImageDecodingError) in
            let base = out.baseAddress!
            for y in 0..<height {
                let source = UnsafeRawPointer(plane + y * rowBytes), row = base + y * 8 * width
                for x in 0..<width {
                    for c in 0..<3 {
                        let sample = source.loadUnaligned(fromByteOffset: (3 * x + c) * 2, as: UInt16.self)
                        row.storeBytes(of: sample, toByteOffset: (4 * x + c) * 2, as: UInt16.self)
                    }
                }
            }
            WideColorConversion.widen(base, stride: 8 * width, samplesPerRow: 4 * width, height: height, bits: bits)
            let samples = base.assumingMemoryBound(to: UInt16.self)
            for pixel in 0..<(width * height) { samples[4 * pixel + 3] = .max }
        }
    }
}
