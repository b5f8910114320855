import Foundation

extension Image {
    /// Applies `handling` to a freshly decoded image whose file said `color`: records the source
    /// profile, converts the pixels (every frame) to sRGB or keeps the profile with them.
    /// Untagged and sRGB-equivalent images are left as they are, at the cost of a dictionary look-up.
    mutating func applyColor(_ color: EmbeddedColor, handling: ColorHandling) {
        if color.isDamaged { repairs.insert(.damagedMetadata) }
        guard let profile = color.profile else { return }
        // A decoder that converted on its own (16-bit PNG, before narrowing to 8 bits) says so by
        // setting the source profile: its pixels are sRGB already.
        let convertedByDecoder = sourceColorProfile != nil
        sourceColorProfile = profile
        switch handling {
        case .ignore: return
        // CMYK files decode to RGB (their decoder converts through the profile, to sRGB, under
        // `keep` too): a CMYK profile cannot travel with RGB pixels.
        case .keep: if profile.colorSpace != .cmyk { colorProfile = profile }
        case .convertToSRGB: if !convertedByDecoder { convertToSRGB(from: profile) }
        }
    }

    /// Converts the pixels from `profile` to sRGB in place (RGB and grey profiles; CMYK files are
    /// converted by their decoder, which still has the ink values).
    mutating func convertToSRGB(from profile: ColorProfile) {
        let (width, height, stride, opaque) = (pixelWidth, pixelHeight, bytesPerRow, isOpaque)
        guard Self.convertToSRGB(&pixels, width: width, height: height, stride: stride, opaque: opaque, from: profile) else { return }
        for index in frames.indices {
            Self.convertToSRGB(&frames[index].pixels, width: width, height: height, stride: 4 * width, opaque: opaque, from: profile)
        }
        if !frames.isEmpty { pixels = frames[0].pixels }
    }

    /// Converts one buffer of premultiplied RGBA8 pixels from `profile` to sRGB in place; `false`
    /// when nothing was done (an sRGB-equivalent profile, a CMYK or other profile, or a
    /// profile LittleCMS cannot build a transform from).
    @discardableResult
    static func convertToSRGB(
        _ pixels: inout [UInt8], width: Int, height: Int, stride: Int, opaque: Bool, from profile: ColorProfile
    ) -> Bool {
        guard !profile.isSRGB else { return false }
        switch profile.colorSpace {
        case .rgb:
            guard let transform = ColorTransforms.shared.transform(from: profile, layout: opaque ? .opaqueRGBA : .premultipliedRGBA)
            else { return false }
            convertRGBA(&pixels, width: width, height: height, stride: stride, with: transform)
            return true
        case .gray:
            guard let transform = ColorTransforms.shared.transform(from: profile, layout: .grayToRGB) else { return false }
            convertGray(&pixels, width: width, height: height, stride: stride, with: transform)
            return true
        case .cmyk, .other:
            return false
        }
    }

    private static func convertRGBA(_ pixels: inout [UInt8], width: Int, height: Int, stride: Int, with transform: ColorTransform) {
        guard width > 0, height > 0, stride >= 4 * width, pixels.count >= stride * height else { return }
        pixels.withUnsafeMutableBytes { buffer in
            transform.convert(buffer.baseAddress!, inputStride: stride, to: buffer.baseAddress!, outputStride: stride, width: width, rows: height)
        }
    }

    /// Grey images decode to RGBA with R = G = B: the grey value (unpremultiplied) goes through
    /// the grey transform one row at a time, and the RGB result is premultiplied again.
    private static func convertGray(_ pixels: inout [UInt8], width: Int, height: Int, stride: Int, with transform: ColorTransform) {
        guard width > 0, height > 0, stride >= 4 * width, pixels.count >= stride * height else { return }
        var grey = [UInt8](repeating: 0, count: width)
        var rgb = [UInt8](repeating: 0, count: 3 * width)
        pixels.withUnsafeMutableBufferPointer { image in
            for row in 0..<height {
                let start = row * stride
                for x in 0..<width {
                    let alpha = Int(image[start + 4 * x + 3]), value = Int(image[start + 4 * x])
                    grey[x] = alpha == 255 || alpha == 0 ? UInt8(value) : UInt8(min(255, (value * 255 + alpha / 2) / alpha))
                }
                grey.withUnsafeBytes { source in
                    rgb.withUnsafeMutableBytes { target in
                        transform.convert(source.baseAddress!, inputStride: width, to: target.baseAddress!, outputStride: 3 * width, width: width, rows: 1)
                    }
                }
                for x in 0..<width {
                    let alpha = Int(image[start + 4 * x + 3])
                    for channel in 0..<3 {
                        let value = Int(rgb[3 * x + channel])
                        image[start + 4 * x + channel] = alpha == 255 ? UInt8(value) : UInt8((value * alpha + 127) / 255)
                    }
                }
            }
        }
    }
}
