/// How WebImage converts a TIFF page's samples to RGBA8 itself, for the pages libtiff's RGBA
/// interface has no conversion for, and for CIE L*a*b* (which it converts with a display model
/// of its own): the samples come from ``TIFFFile/readSamples(_:_:)``, still decompressed by
/// libtiff.
///
/// Each stored sample becomes a level in 0...1 by one rule per kind (docs/architecture/choices.md,
/// "TIFF samples"), then 0...255 rounded half to even:
/// - unsigned integers of 9–16 bits (12-bit scans): their full range, `v / (2^bits − 1)`;
/// - 32-bit integers, signed or unsigned: a 16-bit range, `v / 65535`, below 0 and above 65535
///   clipped (Pillow's mode `I` scaled as 16-bit samples; such files mostly hold 16-bit counts);
/// - 32- and 64-bit floats: a 0–255 range, clipped (Pillow's mode `F`, and libvips' reading);
/// - CMYK (InkSet CMYK, 9–16-bit): R = (1 − C)(1 − K), likewise G and B, as libtiff's and
///   Pillow's 8-bit conversions;
/// - CIE L*a*b* (8- and 16-bit): ``CIELabConversion``.
/// A first extra sample that is alpha (associated or not) is read with the colour samples' rule.
/// Pixels come out straight (not premultiplied).
struct TIFFSampleModel {
    enum Colour {
        case grey(minIsWhite: Bool)
        case cmyk
        case lab(CIELabConversion)
    }

    let colour: Colour
    let bits: Int
    let sampleFormat: Int
    let samplesPerPixel: Int
    /// Colour samples per pixel (1, 4 or 3); alpha, when there is one, follows them.
    let channels: Int
    let hasAlpha: Bool
    let alphaIsAssociated: Bool

    /// The model for `page`, or `nil` when WebImage has no conversion of its own for it either.
    init?(_ page: TIFFFile.Page, whitePoint: (x: Double, y: Double)?) {
        let bits = page.bitsPerSample, format = page.sampleFormat == 4 ? 1 : page.sampleFormat  // 4: "void", read as unsigned
        let integer = (format == 1 && (9...16).contains(bits)) || ((format == 1 || format == 2) && bits == 32)
        switch page.photometric {
        case 0, 1:  // min-is-white, min-is-black
            guard integer || (format == 3 && (bits == 32 || bits == 64)) else { return nil }
            (colour, channels) = (.grey(minIsWhite: page.photometric == 0), 1)
        case 5:  // separated: CMYK inks only (InkSet is checked by the caller)
            guard format == 1, (9...16).contains(bits) else { return nil }
            (colour, channels) = (.cmyk, 4)
        case 8:  // CIE L*a*b*: L unsigned, a* and b* signed, whatever SampleFormat says
            guard bits == 8 || bits == 16 else { return nil }
            (colour, channels) = (.lab(CIELabConversion(whitePoint: whitePoint)), 3)
        default:
            return nil
        }
        guard page.samplesPerPixel >= channels, page.samplesPerPixel <= channels + 8 else { return nil }
        self.bits = bits
        sampleFormat = format
        samplesPerPixel = page.samplesPerPixel
        let extra = page.samplesPerPixel > channels ? page.extraSamples.first : nil
        hasAlpha = extra == 1 || extra == 2
        alphaIsAssociated = extra == 1
    }

    /// Converts one row's pixels to straight RGBA8 at `out` (4 bytes a pixel, `row.count` pixels).
    func convert(_ row: TIFFFile.SampleRow, into out: UnsafeMutableRawBufferPointer) {
        let separate = row.planes.count > 1
        var levels = [Double](repeating: 0, count: channels + 1)
        for i in 0..<min(row.count, out.count / 4) {
            for c in 0..<(channels + (hasAlpha ? 1 : 0)) {
                let raw = separate ? sample(row.planes[c], i) : sample(row.planes[0], i * samplesPerPixel + c)
                levels[c] = level(raw, channel: c)
            }
            let alpha = hasAlpha ? levels[channels] : 1
            if hasAlpha, alphaIsAssociated, alpha > 0, !isLab {
                for c in 0..<channels { levels[c] = min(levels[c] / alpha, 1) }
            }
            let (r, g, b) = rgb(levels)
            out[i * 4] = r
            out[i * 4 + 1] = g
            out[i * 4 + 2] = b
            out[i * 4 + 3] = Self.byte(alpha)
        }
    }

    /// Converts one row of a grey page to straight RGBA16 at `out` (host order, R = G = B,
    /// `row.count` pixels): the levels of ``convert(_:into:)`` rounded to 16 bits instead of 8,
    /// for the high-precision colour path (``TIFFFile/readWidePixels(_:into:)``).
    func convertWide(_ row: TIFFFile.SampleRow, into out: UnsafeMutablePointer<UInt16>) {
        guard case .grey(let minIsWhite) = colour else { return }
        let separate = row.planes.count > 1
        func levelAt(_ pixel: Int, _ channel: Int) -> Double {
            let raw = separate ? sample(row.planes[channel], pixel) : sample(row.planes[0], pixel * samplesPerPixel + channel)
            return self.level(raw, channel: channel)
        }
        for i in 0..<row.count {
            let alpha = hasAlpha ? levelAt(i, 1) : 1
            var grey = levelAt(i, 0)
            if hasAlpha, alphaIsAssociated, alpha > 0 { grey = min(grey / alpha, 1) }
            let value = Self.wide(minIsWhite ? 1 - grey : grey)
            (out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]) = (value, value, value, Self.wide(alpha))
        }
    }

    // MARK: - Internals

    private static func wide(_ level: Double) -> UInt16 { UInt16((clipped(level) * 65_535).rounded(.toNearestOrEven)) }

    private var isLab: Bool { if case .lab = colour { true } else { false } }

    private func rgb(_ levels: [Double]) -> (UInt8, UInt8, UInt8) {
        switch colour {
        case .grey(let minIsWhite):
            let grey = Self.byte(minIsWhite ? 1 - levels[0] : levels[0])
            return (grey, grey, grey)
        case .cmyk:
            let white = 1 - levels[3]
            return (Self.byte((1 - levels[0]) * white), Self.byte((1 - levels[1]) * white), Self.byte((1 - levels[2]) * white))
        case .lab(let conversion):
            return conversion.srgb(l: levels[0], a: levels[1], b: levels[2])
        }
    }

    /// A stored sample's level: 0...1 for colour and alpha; L* (0...100), a*, b* for Lab.
    private func level(_ raw: UInt64, channel: Int) -> Double {
        if isLab, channel < 3 {
            let full = Double((1 << bits) - 1)
            if channel == 0 { return Double(raw) * 100 / full }
            return Double(signed(raw)) / (bits == 16 ? 256 : 1)
        }
        switch (sampleFormat, bits) {
        case (3, 32): return Self.clipped(Double(Float(bitPattern: UInt32(truncatingIfNeeded: raw))) / 255)
        case (3, _): return Self.clipped(Double(bitPattern: raw) / 255)
        case (2, _): return Self.clipped(Double(signed(raw)) / 65535)
        case (_, 32): return Self.clipped(Double(raw) / 65535)
        default: return Double(raw) / Double((1 << bits) - 1)
        }
    }

    private func signed(_ raw: UInt64) -> Int64 {
        let shift = UInt64(64 - bits)
        return Int64(bitPattern: raw << shift) >> Int64(shift)
    }

    /// Sample number `index` of a row: whole bytes in the machine's order for 8, 16, 32 and 64
    /// bits (libtiff swapped them), else packed most significant bit first. 0 past the row's end.
    private func sample(_ row: UnsafeRawBufferPointer, _ index: Int) -> UInt64 {
        switch bits {
        case 8: return index < row.count ? UInt64(row[index]) : 0
        case 16: return index * 2 + 2 <= row.count ? UInt64(row.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self)) : 0
        case 32: return index * 4 + 4 <= row.count ? UInt64(row.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)) : 0
        case 64: return index * 8 + 8 <= row.count ? row.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) : 0
        default:
            let bit = index * bits
            var window: UInt64 = 0
            for k in 0..<3 { window = window << 8 | UInt64(bit / 8 + k < row.count ? row[bit / 8 + k] : 0) }
            return window >> UInt64(24 - bit % 8 - bits) & ((1 << UInt64(bits)) - 1)
        }
    }

    private static func clipped(_ value: Double) -> Double { value.isNaN ? 0 : min(max(value, 0), 1) }

    static func byte(_ level: Double) -> UInt8 { UInt8((clipped(level) * 255).rounded(.toNearestOrEven)) }
}
