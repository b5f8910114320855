/// TIFF pages of more than 8 bits a sample whose profile converts to sRGB are read at 16 bits and
/// converted before they are narrowed (``WideColorConversion``); libtiff's RGBA interface, the
/// usual path, narrows to 8 bits first, and ``TIFFSampleModel``'s 8-bit conversion likewise.
extension TIFFFile {
    /// Whether the page holds samples ``readWidePixels(_:into:)`` reads: 16-bit unsigned
    /// min-is-black grey or RGB with at most one alpha sample marked associated or unassociated
    /// (read here), or grey ``TIFFSampleModel`` reads (9–16-bit unsigned, 32-bit integer and
    /// float, min-is-white or min-is-black: its levels at 16 bits). Every other layout (8-bit,
    /// palette, CMYK, YCbCr, CIE L\*a\*b\*, other extra samples) takes the 8-bit path.
    static func readsWide(_ page: Page) -> Bool {
        readsDirectly(page) || greyModel(page) != nil
    }

    private static func readsDirectly(_ page: Page) -> Bool {
        let channels = page.photometric == 1 ? 1 : page.photometric == 2 ? 3 : 0
        let alpha = page.extraSamples.first
        return channels > 0 && page.bitsPerSample == 16 && (page.sampleFormat == 1 || page.sampleFormat == 4)
            && page.samplesPerPixel >= channels && page.samplesPerPixel <= channels + 8
            && (alpha == nil ? page.samplesPerPixel == channels : alpha == 1 || alpha == 2)
    }

    /// The sample model of a grey page over 8 bits (grey needs no white point).
    private static func greyModel(_ page: Page) -> TIFFSampleModel? {
        guard page.photometric == 0 || page.photometric == 1, page.bitsPerSample > 8,
              let model = TIFFSampleModel(page, whitePoint: nil), case .grey = model.colour else { return nil }
        return model
    }

    /// Reads the current page (one ``readsWide(_:)`` accepts) into `raster` as straight RGBA16
    /// in host byte order, `page.width × page.height` pixels; grey is written as R = G = B.
    /// Associated alpha is divided out.
    func readWidePixels(_ page: Page, into raster: UnsafeMutableRawBufferPointer) throws(ImageDecodingError) {
        let channels = page.photometric == 1 ? 1 : 3
        let hasAlpha = page.samplesPerPixel > channels, associated = page.extraSamples.first == 1
        let (count, overflow) = page.width.multipliedReportingOverflow(by: page.height)
        guard Self.readsWide(page), !overflow, raster.count / 8 >= count else { throw .corrupt(format: .tiff, reason: "raster too small") }
        let out = raster.bindMemory(to: UInt16.self)
        if !Self.readsDirectly(page), let model = Self.greyModel(page) {
            try readSamples(page) { row in
                // Rows and columns lie inside the page (readSamples clips strips and tiles to it).
                model.convertWide(row, into: out.baseAddress! + (row.y * page.width + row.x) * 4)
            }
            return
        }
        try readSamples(page) { row in
            let separate = row.planes.count > 1
            func sample(_ pixel: Int, _ channel: Int) -> UInt16 {
                let (plane, index) = separate ? (row.planes[channel], pixel) : (row.planes[0], pixel * page.samplesPerPixel + channel)
                return index * 2 + 2 <= plane.count ? plane.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self) : 0
            }
            // Rows and columns lie inside the page (readSamples clips strips and tiles to it).
            let start = (row.y * page.width + row.x) * 4
            for i in 0..<row.count {
                let alpha = hasAlpha ? sample(i, channels) : .max
                for c in 0..<3 {
                    var value = sample(i, channels == 1 ? 0 : c)
                    if associated, alpha < .max {
                        value = alpha == 0 ? 0 : UInt16(min(65_535, (UInt32(value) * 65_535 + UInt32(alpha) / 2) / UInt32(alpha)))
                    }
                    out[start + 4 * i + c] = value
                }
                out[start + 4 * i + 3] = alpha
            }
        }
    }
}
