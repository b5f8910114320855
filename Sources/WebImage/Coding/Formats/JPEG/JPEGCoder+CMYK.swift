import Foundation

extension JPEGCoder {
    /// Turns CMYK samples as libjpeg-turbo hands them out of a CMYK or YCCK file (Adobe's
    /// convention, as Photoshop and Pillow write them: 0 = full ink) into opaque RGBA, in place:
    /// through the file's embedded CMYK profile when it has one (LittleCMS, as Pillow's ImageCms
    /// and libvips do), else with the fixed formula (``PixelOperations/convertInvertedCMYK(_:)``),
    /// which is also what untagged CMYK and ``ColorHandling/ignore`` get. ``ColorHandling/keep``
    /// converts through the profile too: ink values cannot stay in RGB pixels and a CMYK profile
    /// cannot describe them, so the nearest to "as the file looks" is sRGB (libvips and imgproxy
    /// also turn CMYK into sRGB whatever they are told to keep).
    static func convertCMYK(_ pixels: inout [UInt8], width: Int, height: Int, file: Data, handling: ColorHandling) {
        guard handling != .ignore, width > 0, height > 0, pixels.count >= 4 * width * height,
              case .bytes(let icc) = EmbeddedColor.jpegProfile(file), let profile = ColorProfile(iccData: icc),
              profile.colorSpace == .cmyk,
              let transform = ColorTransforms.shared.transform(from: profile, layout: .cmykToRGB(inverted: true))
        else {
            PixelOperations.convertInvertedCMYK(&pixels)
            return
        }
        var rgb = [UInt8](repeating: 0, count: 3 * width)
        pixels.withUnsafeMutableBufferPointer { image in
            for row in 0..<height {
                let start = row * 4 * width
                rgb.withUnsafeMutableBytes { target in
                    transform.convert(
                        UnsafeRawPointer(image.baseAddress! + start), inputStride: 4 * width, to: target.baseAddress!,
                        outputStride: 3 * width, width: width, rows: 1)
                }
                for x in 0..<width {
                    image[start + 4 * x] = rgb[3 * x]
                    image[start + 4 * x + 1] = rgb[3 * x + 1]
                    image[start + 4 * x + 2] = rgb[3 * x + 2]
                    image[start + 4 * x + 3] = 255
                }
            }
        }
    }
}
