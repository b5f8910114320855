internal import CJxl
import Foundation

extension JXLCoder {
    /// The 16-bit output of a JPEG XL of more than 8 bits a sample whose colour space converts
    /// to sRGB: libjxl writes each frame as RGBA16 (`JXL_TYPE_UINT16`, straight alpha, host
    /// order) into one buffer kept for the whole decode (libjxl fills it over several events, a
    /// piece of the file at a time), which ``WideColorConversion`` converts before narrowing to
    /// RGBA8. Files that need no conversion keep libjxl's 8-bit output (``JXLCoder/decode(_:options:)``).
    final class WideOutput {
        let conversion: WideColorConversion
        let width: Int
        let height: Int
        private let buffer: UnsafeMutableRawBufferPointer
        private var format = JxlPixelFormat(num_channels: 4, data_type: JXL_TYPE_UINT16, endianness: JXL_NATIVE_ENDIAN, align: 0)

        /// `conversion` was planned for `width × height` (at most ``WideColorConversion/maxPixels``),
        /// so the 8 bytes a pixel cannot overflow.
        init(_ conversion: WideColorConversion, width: Int, height: Int) throws(ImageDecodingError) {
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            guard width > 0, height > 0, !overflow, pixels <= WideColorConversion.maxPixels else {
                throw .tooManyPixels(width: width, height: height, frames: 1, limit: WideColorConversion.maxPixels)
            }
            self.conversion = conversion
            self.width = width
            self.height = height
            // Zeroed by calloc (fresh pages, no loop over up to 8 bytes × the pixel limit).
            guard let memory = calloc(8 * pixels, 1) else {
                throw .tooManyPixels(width: width, height: height, frames: 1, limit: WideColorConversion.maxPixels)
            }
            buffer = UnsafeMutableRawBufferPointer(start: memory, count: 8 * pixels)
        }

        deinit { free(buffer.baseAddress) }

        /// Gives libjxl the buffer for the next frame (at `JXL_DEC_NEED_IMAGE_OUT_BUFFER`).
        func attach(_ handle: OpaquePointer) throws(ImageDecodingError) {
            var size = 0
            guard JxlDecoderImageOutBufferSize(handle, &format, &size) == JXL_DEC_SUCCESS, size == buffer.count else {
                throw .corrupt(format: .jpegXL, reason: "unexpected frame size")
            }
            guard JxlDecoderSetImageOutBuffer(handle, &format, buffer.baseAddress, buffer.count) == JXL_DEC_SUCCESS else {
                throw .corrupt(format: .jpegXL, reason: "output buffer refused")
            }
        }

        /// The frame libjxl has completed (at `JXL_DEC_FULL_IMAGE`), converted and narrowed to
        /// straight RGBA8. The buffer is converted in place and rewritten by the next frame.
        func frame() -> [UInt8] {
            conversion.convertNarrowing(buffer.baseAddress!, stride: 8 * width, width: width, height: height)
        }
    }

    /// Whether the decoded pixels' colour encoding (`TARGET_DATA`) is stated as sRGB (or its grey):
    /// such files need no conversion, and the colour statement is not read again to find that out.
    static func dataIsSRGB(_ handle: OpaquePointer) -> Bool {
        var encoding = JxlColorEncoding()
        guard JxlDecoderGetColorAsEncodedProfile(handle, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding) == JXL_DEC_SUCCESS else {
            return false  // an ICC profile: converted unless it turns out to be sRGB
        }
        return (encoding.color_space == JXL_COLOR_SPACE_RGB && encoding.primaries == JXL_PRIMARIES_SRGB
            || encoding.color_space == JXL_COLOR_SPACE_GRAY)
            && encoding.white_point == JXL_WHITE_POINT_D65 && encoding.transfer_function == JXL_TRANSFER_FUNCTION_SRGB
    }
}
