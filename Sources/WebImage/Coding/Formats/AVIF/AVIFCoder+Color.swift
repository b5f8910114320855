internal import CAvif
import Foundation

extension AVIFCoder {
    /// The colour the container states for the primary item (its `colr` boxes, as libavif
    /// reads them while parsing, without decoding): the ICC profile when there is one, else the
    /// `nclx` primaries and transfer (see ``ColorDescription/nclx(primaries:transfer:)``).
    /// A file libavif cannot parse states nothing (decoding reports the error).
    static func statedColor(_ data: Data) -> EmbeddedColor.ICCBytes {
        guard !data.isEmpty, CodecLibrary.avif.unavailableReason == nil, let decoder = avifDecoderCreate() else { return .none }
        defer { avifDecoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        decoder.pointee.strictFlags = AVIF_STRICT_DISABLED.rawValue
        return data.withUnsafeBytes { raw -> EmbeddedColor.ICCBytes in
            guard let base = raw.baseAddress?.assumingMemoryBound(to: UInt8.self), ISOItemLimit.count(raw) <= ISOItemLimit.maxItems,
                  avifDecoderSetIOMemory(decoder, base, raw.count) == AVIF_RESULT_OK,
                  avifDecoderParse(decoder) == AVIF_RESULT_OK, let image = decoder.pointee.image
            else { return .none }
            let icc = image.pointee.icc
            if icc.size > 0, let bytes = icc.data {
                guard icc.size <= ColorProfile.maxByteCount else { return .damaged }
                return .bytes(Data(bytes: bytes, count: icc.size))
            }
            return ColorDescription.nclx(
                primaries: Int(image.pointee.colorPrimaries), transfer: Int(image.pointee.transferCharacteristics))
        }
    }

    /// Straight RGBA8 of the decoder's current frame through `conversion`: libavif converts the
    /// 10- or 12-bit YUV to RGBA16 (`depth` 16, its full range), which converts to sRGB before
    /// it is narrowed (``WideColorConversion``).
    static func rgba(_ image: UnsafeMutablePointer<avifImage>, converting conversion: WideColorConversion) throws(ImageDecodingError) -> [UInt8] {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGBA
        rgb.depth = 16
        let width = Int(rgb.width), height = Int(rgb.height)
        // A 32-bit width times 8 fits an Int; the plan admitted at most 2^24 pixels anyway.
        guard let rowBytes = UInt32(exactly: width * 8) else {
            throw .corrupt(format: .avif, reason: "image of \(rgb.width) × \(rgb.height) too large")
        }
        return try conversion.decode(width: width, height: height) { out throws(ImageDecodingError) in
            rgb.pixels = out.baseAddress?.assumingMemoryBound(to: UInt8.self)
            rgb.rowBytes = rowBytes
            try check(avifImageYUVToRGB(image, &rgb))
        }
    }
}
