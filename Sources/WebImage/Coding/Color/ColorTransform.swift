import CLcms2
import Dispatch
import Foundation

/// One LittleCMS transform to sRGB for one pixel layout.
///
/// `@unchecked Sendable`: the handle is built once, never changed, and deleted in `deinit`.
/// LittleCMS runs one transform from several threads at once: `cmsDoTransform` copies the
/// transform's one-pixel cache into a local before using it, so calls share no written state.
final class ColorTransform: @unchecked Sendable {
    private let handle: cmsHTRANSFORM
    let layout: ColorTransforms.Layout
    /// Matrix-and-curve RGB profiles on opaque pixels: converted without LittleCMS's pipeline.
    private let matrixShaper: MatrixShaperConversion?

    /// Builds the transform from `source` to sRGB (perceptual intent, as Pillow's ImageCms
    /// defaults to; matrix-and-curve profiles convert the same under every intent).
    init?(context: ColorContext, source: cmsHPROFILE, layout: ColorTransforms.Layout) {
        guard let sRGB = context.sRGB() else { return nil }
        defer { cmsCloseProfile(sRGB) }
        let input: cmsUInt32Number, output: cmsUInt32Number
        var flags: cmsUInt32Number = 0
        switch layout {
        case .opaqueRGBA:
            (input, output) = (webimage_lcms_rgba8(), webimage_lcms_rgba8())
            flags = cmsUInt32Number(cmsFLAGS_COPY_ALPHA)
        case .premultipliedRGBA:
            (input, output) = (webimage_lcms_rgba8_premultiplied(), webimage_lcms_rgba8_premultiplied())
            flags = cmsUInt32Number(cmsFLAGS_COPY_ALPHA)
        case .rgba16:
            (input, output) = (webimage_lcms_rgba16(), webimage_lcms_rgba16())
            flags = cmsUInt32Number(cmsFLAGS_COPY_ALPHA)
        case .grayInRGBA16:
            // G, B and alpha are extra samples the grey input skips; the output's alpha is not
            // written (no COPY_ALPHA: the counts of extra samples differ), so in place it stays.
            (input, output) = (webimage_lcms_gray_in_rgba16(), webimage_lcms_rgba16())
        case .grayToRGB: (input, output) = (webimage_lcms_gray8(), webimage_lcms_rgb8())
        case .cmykToRGB(let inverted): (input, output) = (inverted ? webimage_lcms_cmyk8_inverted() : webimage_lcms_cmyk8(), webimage_lcms_rgb8())
        }
        guard let built = cmsCreateTransformTHR(context.handle, source, input, sRGB, output, cmsUInt32Number(INTENT_PERCEPTUAL), flags) else {
            return nil
        }
        handle = built
        self.layout = layout
        matrixShaper = layout == .opaqueRGBA ? MatrixShaperConversion(source: source, sRGB: sRGB) : nil
    }

    deinit { cmsDeleteTransform(handle) }

    /// Converts `rows` rows of `width` pixels: `input` and `output` may be the same buffer when
    /// the layout keeps the pixel size (the RGBA layouts). Strides are in bytes; 16-bit layouts
    /// need 2-byte-aligned rows.
    func convert(
        _ input: UnsafeRawPointer, inputStride: Int, to output: UnsafeMutableRawPointer, outputStride: Int,
        width: Int, rows: Int
    ) {
        guard width > 0, rows > 0, let w = cmsUInt32Number(exactly: width), cmsUInt32Number(exactly: rows) != nil,
              let inStride = cmsUInt32Number(exactly: inputStride), let outStride = cmsUInt32Number(exactly: outputStride)
        else { return }
        let bands = Self.bands(width: width, rows: rows)
        // The bands' closures get the buffers as addresses: each band reads and writes its own
        // rows only, and `inBands` returns after every band is done, while the caller still
        // holds both buffers.
        let inputAddress = Int(bitPattern: input), outputAddress = Int(bitPattern: output)
        if matrixShaper != nil, input == UnsafeRawPointer(output), inputStride == outputStride,
           outputStride % 4 == 0, outputAddress % 4 == 0 {
            Self.inBands(bands, rows: rows) { [self] first, count in
                guard let rows = UnsafeMutableRawPointer(bitPattern: outputAddress + first * outputStride) else { return }
                matrixShaper?.convert(rows, stride: outputStride, width: width, rows: count)
            }
            return
        }
        Self.inBands(bands, rows: rows) { [self] first, count in
            guard let source = UnsafeRawPointer(bitPattern: inputAddress + first * inputStride),
                  let target = UnsafeMutableRawPointer(bitPattern: outputAddress + first * outputStride) else { return }
            cmsDoTransformLineStride(handle, source, target, w, cmsUInt32Number(count), inStride, outStride, 0, 0)
        }
    }


    /// Large images are converted in one band of rows per core: the conversion is one pass over
    /// memory that the decode just wrote, and splitting it keeps it a small share of the decode
    /// (the decoders themselves run on one thread). Below a megapixel, one band.
    static func bands(width: Int, rows: Int) -> Int {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: rows)
        guard overflow || pixels >= 1 << 20, rows >= 64 else { return 1 }
        return min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 8)
    }

    private static func inBands(_ bands: Int, rows: Int, _ body: @Sendable (_ first: Int, _ count: Int) -> Void) {
        guard bands > 1 else { return body(0, rows) }
        let perBand = (rows + bands - 1) / bands
        DispatchQueue.concurrentPerform(iterations: bands) { band in
            let first = band * perBand
            if first < rows { body(first, min(perBand, rows - first)) }
        }
    }

    /// `true` when this RGB transform moves no colour of a 6 × 6 × 6 grid (plus greys) by more
    /// than one 8-bit level: the profile is sRGB under another name.
    func isIdentityOnProbeColors() -> Bool {
        guard layout == .opaqueRGBA else { return false }
        let steps: [UInt8] = [0, 51, 102, 153, 204, 255]
        var probe: [UInt8] = []
        for r in steps { for g in steps { for b in steps { probe += [r, g, b, 255] } } }
        for grey in stride(from: 0, through: 255, by: 15) { probe += [UInt8(grey), UInt8(grey), UInt8(grey), 255] }
        var converted = probe
        let count = probe.count / 4
        probe.withUnsafeBytes { source in
            converted.withUnsafeMutableBytes { target in
                convert(source.baseAddress!, inputStride: count * 4, to: target.baseAddress!, outputStride: count * 4, width: count, rows: 1)
            }
        }
        return zip(probe, converted).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
    }
}
