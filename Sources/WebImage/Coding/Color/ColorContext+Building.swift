import CLcms2
import Foundation

extension ColorContext {
    /// An RGB matrix-and-curve ICC profile for `description` (LittleCMS adapts the white point to
    /// the D50 connection space with Bradford), serialised; `nil` when LittleCMS refuses the
    /// numbers. The creation date in the header is zeroed: the same description always gives the
    /// same bytes.
    func rgbProfile(_ description: ColorDescription) -> Data? {
        var white = cmsCIExyY(x: description.white.x, y: description.white.y, Y: 1)
        var primaries = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: description.red.x, y: description.red.y, Y: 1),
            Green: cmsCIExyY(x: description.green.x, y: description.green.y, Y: 1),
            Blue: cmsCIExyY(x: description.blue.x, y: description.blue.y, Y: 1))
        let perChannel = description.curves.count == 3 ? description.curves : Array(repeating: description.curves[0], count: 3)
        let curves = perChannel.map(toneCurve)
        defer { for curve in curves where curve != nil { cmsFreeToneCurve(curve) } }
        guard curves.allSatisfy({ $0 != nil }) else { return nil }
        let built: cmsHPROFILE? = curves.withUnsafeBufferPointer { table in
            cmsCreateRGBProfileTHR(handle, &white, &primaries, table.baseAddress)
        }
        guard let built else { return nil }
        defer { cmsCloseProfile(built) }
        if let text = cmsMLUalloc(handle, 1) {
            defer { cmsMLUfree(text) }
            let name = String(description.name.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 }.prefix(120))
            _ = cmsMLUsetASCII(text, "en", "US", name)
            _ = cmsWriteTag(built, cmsSigProfileDescriptionTag, UnsafeRawPointer(text))
        }
        var size: cmsUInt32Number = 0
        guard cmsSaveProfileToMem(built, nil, &size) != 0, size >= 128, size <= 1 << 20 else { return nil }
        var bytes = Data(count: Int(size))
        let saved = bytes.withUnsafeMutableBytes { cmsSaveProfileToMem(built, $0.baseAddress, &size) }
        guard saved != 0 else { return nil }
        bytes.replaceSubrange(24..<36, with: repeatElement(0, count: 12))  // dateTimeNumber
        return bytes
    }

    private func toneCurve(_ curve: ColorDescription.ToneCurve) -> OpaquePointer? {
        switch curve {
        case .sRGB:
            // IEC 61966-2-1 as LittleCMS's type 4: Y = (aX + b)^g for X ≥ d, else cX.
            let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            return parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(handle, 4, $0.baseAddress) }
        case .gamma(let gamma):
            return cmsBuildGamma(handle, gamma)
        case .pq, .hlg:
            // Tabulated: the transfer and the tone mapping in one monotonic curve to [0, 1].
            let table = HDRToneMapping.table(for: curve, count: 4096)
            return table.withUnsafeBufferPointer { cmsBuildTabulatedToneCurveFloat(handle, cmsUInt32Number($0.count), $0.baseAddress) }
        }
    }
}
