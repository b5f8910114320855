import CLcms2

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
    /// the layout keeps the pixel size (the RGBA layouts). Strides are in bytes.
    func convert(
        _ input: UnsafeRawPointer, inputStride: Int, to output: UnsafeMutableRawPointer, outputStride: Int,
        width: Int, rows: Int
    ) {
        guard width > 0, rows > 0, let w = cmsUInt32Number(exactly: width), let h = cmsUInt32Number(exactly: rows),
              let inStride = cmsUInt32Number(exactly: inputStride), let outStride = cmsUInt32Number(exactly: outputStride)
        else { return }
        if let matrixShaper, input == UnsafeRawPointer(output), inputStride == outputStride {
            matrixShaper.convert(output, stride: outputStride, width: width, rows: rows)
            return
        }
        cmsDoTransformLineStride(handle, input, output, w, h, inStride, outStride, 0, 0)
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
