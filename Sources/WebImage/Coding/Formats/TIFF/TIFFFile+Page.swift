import Foundation
internal import CTiff

extension TIFFFile {
    /// One directory (page) as its tags describe it.
    struct Page {
        var width: Int
        var height: Int
        var orientation: ImageOrientation
        var bitsPerSample: Int
        var samplesPerPixel: Int
        var photometric: Int
        /// `SampleFormat`: 1 unsigned integer (the default), 2 signed integer, 3 IEEE float.
        var sampleFormat: Int
        /// `ExtraSamples`: what each sample beyond the colour model's is (1 associated alpha,
        /// 2 unassociated alpha, 0 unspecified).
        var extraSamples: [Int]
        var hasICCProfile: Bool
        /// A reduced-resolution copy (NewSubfileType bit 0): a preview of another page.
        var isReduced: Bool

        var hasAlpha: Bool { !extraSamples.isEmpty }
    }

    /// Samples a pixel a page may have.
    static let maxSamplesPerPixel: UInt16 = 16

    /// The current directory's tags.
    func page() throws(ImageDecodingError) -> Page {
        var width: UInt32 = 0, height: UInt32 = 0, subfile: UInt32 = 0
        var orientation: UInt16 = 1, bits: UInt16 = 1, samples: UInt16 = 1, photometric: UInt16 = 0, format: UInt16 = 1
        guard webimage_tiff_u32(tiff, UInt32(TIFFTAG_IMAGEWIDTH), &width) == 1,
              webimage_tiff_u32(tiff, UInt32(TIFFTAG_IMAGELENGTH), &height) == 1, width > 0, height > 0
        else { throw failure("no image size") }
        _ = webimage_tiff_u32(tiff, UInt32(TIFFTAG_SUBFILETYPE), &subfile)
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_ORIENTATION), &orientation)
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_BITSPERSAMPLE), &bits)
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_SAMPLESPERPIXEL), &samples)
        // libtiff reads a strip of every sample before we keep four: 390 samples a pixel made a
        // 1 MP page of 380 KB take 412 MB (red team, stop 52). Pictures have up to five (CMYK and
        // alpha) and a few extra channels.
        guard samples <= Self.maxSamplesPerPixel else {
            throw .corrupt(format: .tiff, reason: "\(samples) samples a pixel, more than \(Self.maxSamplesPerPixel)")
        }
        if webimage_tiff_u16(tiff, UInt32(TIFFTAG_PHOTOMETRIC), &photometric) != 1 {
            // No tag (and no default in TIFF 6.0): what libtiff's RGBA interface and Pillow assume.
            photometric = samples >= 3 ? UInt16(PHOTOMETRIC_RGB) : UInt16(PHOTOMETRIC_MINISBLACK)
        }
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_SAMPLEFORMAT), &format)
        var extraCount: UInt16 = 0
        var extraTypes: UnsafeMutablePointer<UInt16>?
        _ = webimage_tiff_extra_samples(tiff, &extraCount, &extraTypes)
        // libtiff keeps ExtraSamples below SamplesPerPixel; the count bounds the read all the same.
        let extras = extraTypes.map { types in (0..<Int(min(extraCount, samples))).map { Int(types[$0]) } } ?? []
        var iccCount: UInt32 = 0
        var icc: UnsafeMutableRawPointer?
        let hasICC = webimage_tiff_icc(tiff, &iccCount, &icc) == 1 && iccCount > 0
        return Page(
            width: Int(width), height: Int(height), orientation: ImageOrientation(exifValue: Int(orientation)),
            bitsPerSample: Int(bits), samplesPerPixel: Int(samples), photometric: Int(photometric),
            sampleFormat: Int(format), extraSamples: extras, hasICCProfile: hasICC,
            isReduced: subfile & UInt32(FILETYPE_REDUCEDIMAGE) != 0)
    }

    /// The chromaticity (x, y) of the white CIE L*a*b* samples are relative to, from the file's
    /// `WhitePoint` tag; `nil` without one (then D50: Adobe's TIFF Lab note; TIFF 6.0 names none).
    func whitePoint() -> (x: Double, y: Double)? {
        var x: Float = 0, y: Float = 0
        guard webimage_tiff_white_point(tiff, &x, &y) == 1, x > 0, y > 0, x.isFinite, y.isFinite, x + y < 1 else { return nil }
        return (Double(x), Double(y))
    }
}
