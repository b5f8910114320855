import Foundation

/// The high-precision colour conversion every decoder of more than 8 bits a sample shares
/// (16-bit PNG, 16-bit and deep grey TIFF pages, 10- and 12-bit AVIF and HEIF, JPEG XL over 8 bits:
/// docs/architecture/colour.md lists the layouts): the decoder writes straight RGBA16, a
/// 16-bit LittleCMS transform converts it to sRGB, and only then are the samples rounded to
/// 8 bits, so a smooth wide-gamut gradient keeps its steps (converting after the narrowing
/// merges neighbouring levels where the profile's curve is steeper than sRGB's: banding).
/// libvips converts the same way; Pillow narrows first.
///
/// A decoder asks for a plan with ``planned(width:height:frames:bitDepth:options:color:)``
/// before it allocates anything, decodes into RGBA16 through the plan, and marks its image
/// converted by setting ``Image/sourceColorProfile`` to ``profile`` (so ``Image/applyColor``
/// does not convert twice). Without a plan it decodes to 8 bits and the image converts
/// afterwards, as before.
struct WideColorConversion {
    let profile: ColorProfile
    let transform: ColorTransform

    /// Above this many pixels (a frame) the RGBA16 buffer (8 bytes a pixel, beside the RGBA8
    /// result) is not worth its memory: larger files convert after the 8-bit decode.
    static let maxPixels = 16 << 20

    /// The 16-bit conversion for a decode of `frames` frames of `width × height` samples of
    /// `bitDepth` bits, or `nil` when the 8-bit path applies: 8-bit samples, another colour
    /// handling, an untagged or sRGB file, a CMYK or unusable profile, more than ``maxPixels``
    /// pixels, or a ``ImageDecodingOptions/maxDecodedBytes`` budget that the RGBA16 buffer
    /// and the RGBA8 frames (`8 + 4 × frames` bytes a pixel) would exceed. Every value may come
    /// from the file: nothing here traps. `color` is read only when everything else allows.
    static func planned(
        width: Int, height: Int, frames: Int = 1, bitDepth: Int, options: ImageDecodingOptions,
        color: () -> EmbeddedColor
    ) -> WideColorConversion? {
        guard options.colorHandling == .convertToSRGB, bitDepth > 8, width > 0, height > 0, frames > 0 else { return nil }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixels else { return nil }
        if let budget = options.maxDecodedBytes {
            let (frameBytes, overflow1) = frames.multipliedReportingOverflow(by: 4)
            let (perPixel, overflow2) = frameBytes.addingReportingOverflow(8)
            let (bytes, overflow3) = pixels.multipliedReportingOverflow(by: perPixel)
            guard !overflow1, !overflow2, !overflow3, bytes <= budget else { return nil }
        }
        guard let profile = color().profile, !profile.isSRGB else { return nil }
        let layout: ColorTransforms.Layout
        switch profile.colorSpace {
        case .rgb: layout = .rgba16
        case .gray: layout = .grayInRGBA16
        case .cmyk, .other: return nil
        }
        guard let transform = ColorTransforms.shared.transform(from: profile, layout: layout) else { return nil }
        return WideColorConversion(profile: profile, transform: transform)
    }

    /// Allocates a zeroed RGBA16 buffer of `width × height` pixels (host byte order, straight
    /// alpha, rows of `8 × width` bytes), lets `fill` decode into it, and returns the converted
    /// pixels as straight RGBA8. The buffer lives for this call only.
    func decode(
        width: Int, height: Int, _ fill: (UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Void
    ) throws(ImageDecodingError) -> [UInt8] {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        // The plan was made for these sides; a decoder passing others is refused, not trusted.
        guard width > 0, height > 0, !overflow, pixels <= Self.maxPixels else {
            throw .tooManyPixels(width: width, height: height, frames: 1, limit: Self.maxPixels)
        }
        var wide = [UInt16](repeating: 0, count: 4 * pixels)
        let failure: ImageDecodingError? = wide.withUnsafeMutableBytes { buffer in
            do throws(ImageDecodingError) {
                try fill(buffer)
                return nil
            } catch { return error }
        }
        if let failure { throw failure }
        return wide.withUnsafeMutableBytes { buffer in
            convertNarrowing(buffer.baseAddress!, stride: 8 * width, width: width, height: height)
        }
    }

    /// Converts `height` rows of `width` straight RGBA16 pixels at `rows` (host byte order,
    /// `stride` bytes apart, 2-byte aligned) to sRGB in place, and returns them as packed
    /// straight RGBA8, each sample rounded (v × 255 / 65535): the conversion happens before the
    /// precision is lost.
    func convertNarrowing(_ rows: UnsafeMutableRawPointer, stride: Int, width: Int, height: Int) -> [UInt8] {
        precondition(width >= 0 && height >= 0 && stride >= 8 * width && Int(bitPattern: rows) % 2 == 0)
        transform.convert(rows, inputStride: stride, to: rows, outputStride: stride, width: width, rows: height)
        let rowSamples = 4 * width
        return [UInt8](unsafeUninitializedCapacity: rowSamples * height) { narrow, count in
            for y in 0..<height {
                let row = (rows + y * stride).assumingMemoryBound(to: UInt16.self)
                let out = y * rowSamples
                for index in 0..<rowSamples {
                    narrow[out + index] = UInt8(truncatingIfNeeded: (UInt32(row[index]) &* 255 &+ 32_767) / 65_535)
                }
            }
            count = rowSamples * height
        }
    }

    /// Divides premultiplied RGBA16 (host order, `stride` bytes apart, 2-byte aligned) by its
    /// alpha in place, rounded; colour over its alpha (not valid premultiplied data) is clipped
    /// to full, and a pixel of alpha 0 becomes black.
    static func unpremultiply(_ rows: UnsafeMutableRawPointer, stride: Int, width: Int, height: Int) {
        guard width > 0, height > 0 else { return }
        for y in 0..<height {
            let row = (rows + y * stride).assumingMemoryBound(to: UInt16.self)
            for x in 0..<width {
                let alpha = UInt32(row[4 * x + 3])
                guard alpha < 65_535 else { continue }
                for c in 0..<3 {
                    let value = UInt32(row[4 * x + c])
                    row[4 * x + c] = alpha == 0 ? 0 : UInt16(min(65_535, (value &* 65_535 &+ alpha / 2) / alpha))
                }
            }
        }
    }

    /// Widens samples of `bits` bits (1…16, in the low bits of little-endian 16-bit words, as
    /// libheif and most codecs write 10- and 12-bit samples) to the full 16-bit range in host
    /// order, in place: v × 65535 / (2^bits − 1), rounded; values past the range are clipped.
    static func widen(_ rows: UnsafeMutableRawPointer, stride: Int, samplesPerRow: Int, height: Int, bits: Int) {
        guard (1...16).contains(bits), samplesPerRow > 0, height > 0 else { return }
        let maximum = UInt32(1) << UInt32(bits) - 1
        for y in 0..<height {
            let row = (rows + y * stride).assumingMemoryBound(to: UInt16.self)
            for index in 0..<samplesPerRow {
                let value = min(UInt32(UInt16(littleEndian: row[index])), maximum)
                row[index] = UInt16(truncatingIfNeeded: (value &* 65_535 &+ maximum / 2) / maximum)
            }
        }
    }
}
