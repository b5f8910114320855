internal import CTiff

extension TIFFFile {
    /// Decodes the current directory into `raster` (`page.width × page.height` RGBA8, top row
    /// first in the order stored: the orientation tag is reported, not applied). Returns `true`
    /// when the pixels are straight (not yet premultiplied).
    ///
    /// CIE L\*a\*b\*, CMYK over 8 bits, and pages libtiff's RGBA interface refuses that a
    /// ``TIFFSampleModel`` converts, are read through ``readSamples(_:_:)`` and converted here (straight); everything
    /// else through the RGBA interface (premultiplied by libtiff). A page neither reads throws
    /// the RGBA interface's reason.
    func readPixels(_ page: Page, into raster: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) -> Bool {
        let refusal = rgbaRefusal()
        // The RGBA interface passes CMYK of other than 8 bits, then has no routine to draw it.
        let ownModel = page.photometric == Int(PHOTOMETRIC_CIELAB) || refusal != nil
            || (page.photometric == Int(PHOTOMETRIC_SEPARATED) && page.bitsPerSample != 8)
        if ownModel, let model = sampleModel(page) {
            let (count, overflow) = page.width.multipliedReportingOverflow(by: page.height)
            guard !overflow, raster.count / 4 >= count else { throw .corrupt(format: .tiff, reason: "raster too small") }
            try readSamples(page) { row in
                // Rows and columns lie inside the page (readSamples clips strips and tiles to it).
                let start = (row.y * page.width + row.x) * 4
                model.convert(row, into: UnsafeMutableRawBufferPointer(rebasing: raster[start..<start + row.count * 4]))
            }
            return true
        }
        if let refusal { throw .corrupt(format: .tiff, reason: refusal) }
        try readRGBA(page, into: raster)
        return false
    }

    /// WebImage's own conversion for the current directory, if it has one (CMYK only with the
    /// CMYK ink set).
    private func sampleModel(_ page: Page) -> TIFFSampleModel? {
        var inkSet = UInt16(INKSET_CMYK)
        _ = webimage_tiff_u16(tiff, UInt32(TIFFTAG_INKSET), &inkSet)
        guard page.photometric != Int(PHOTOMETRIC_SEPARATED) || inkSet == UInt16(INKSET_CMYK) else { return nil }
        return TIFFSampleModel(page, whitePoint: whitePoint())
    }
}
