internal import Foundation

/// Turning packed premultiplied RGBA8 by any angle onto a canvas that holds the whole result.
///
/// Each output pixel centre is mapped back into the source (the centres of both canvases
/// coincide) and sampled bilinearly from its four nearest source pixels; a neighbour outside
/// the source counts as the background, so the picture's edges blend into it (anti-aliased)
/// instead of stair-stepping.
struct AffineRotation {
    let width: Int, height: Int
    let outputWidth: Int, outputHeight: Int
    let cosine: Double, sine: Double

    /// `degrees` clockwise (screen coordinates, y down).
    init(width: Int, height: Int, degrees: Double) {
        self.width = width
        self.height = height
        let radians = degrees * .pi / 180
        // Rounded so that exact angles give exact sizes (cos 90° is 6e-17, not 0).
        cosine = (cos(radians) * 1e12).rounded() / 1e12
        sine = (sin(radians) * 1e12).rounded() / 1e12
        // The turned corners' bounding box, widened to whole pixels around the centre (as
        // Pillow's `rotate(expand=True)`: ceil of the right edge minus floor of the left).
        let halfWidth = (Double(width) * abs(cosine) + Double(height) * abs(sine)) / 2
        let halfHeight = (Double(width) * abs(sine) + Double(height) * abs(cosine)) / 2
        outputWidth = Self.span(centre: Double(width) / 2, half: halfWidth)
        outputHeight = Self.span(centre: Double(height) / 2, half: halfHeight)
    }

    private static func span(centre: Double, half: Double) -> Int {
        guard half.isFinite, half < Double(Int32.max) else { return Int(Int32.max) }
        let epsilon = 1e-9  // keeps float noise from adding a pixel
        return Int((centre + half - epsilon).rounded(.up)) - Int((centre - half + epsilon).rounded(.down))
    }

    /// The turned picture, `outputWidth × outputHeight`, corners filled with `background`
    /// (premultiplied, 0...255).
    func apply(_ pixels: [UInt8], background: SIMD4<Float>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: outputWidth * outputHeight * 4)
        let cosA = Float(cosine), sinA = Float(sine)
        let outCentreX = Float(outputWidth) / 2, outCentreY = Float(outputHeight) / 2
        // Source coordinates in pixel-centre units: pixel (i, j) sits at (i, j).
        let srcCentreX = Float(width) / 2 - 0.5, srcCentreY = Float(height) / 2 - 0.5
        pixels.withUnsafeBufferPointer { src in
            output.withUnsafeMutableBufferPointer { dst in
                func sample(_ x: Int, _ y: Int) -> SIMD4<Float> {
                    guard x >= 0, x < width, y >= 0, y < height else { return background }
                    let s = (y * width + x) * 4
                    return SIMD4(Float(src[s]), Float(src[s + 1]), Float(src[s + 2]), Float(src[s + 3]))
                }
                for y in 0..<outputHeight {
                    // A cancelled task stops here; its caller throws the pixels away.
                    if y & 15 == 0, Task.isCancelled { break }
                    let dy = Float(y) + 0.5 - outCentreY
                    // The inverse turn: source = R(-angle) · (output - centre) + source centre.
                    var u = -outCentreX + 0.5, d = y * outputWidth * 4
                    for _ in 0..<outputWidth {
                        let sx = cosA * u + sinA * dy + srcCentreX
                        let sy = -sinA * u + cosA * dy + srcCentreY
                        u += 1
                        let x0f = sx.rounded(.down), y0f = sy.rounded(.down)
                        var value = background
                        // Points further than a pixel from the source only see background.
                        if x0f >= -1, y0f >= -1, x0f < Float(width), y0f < Float(height) {
                            let x0 = Int(x0f), y0 = Int(y0f)
                            let fx = sx - x0f, fy = sy - y0f
                            let top = sample(x0, y0) * (1 - fx) + sample(x0 + 1, y0) * fx
                            let bottom = sample(x0, y0 + 1) * (1 - fx) + sample(x0 + 1, y0 + 1) * fx
                            value = top * (1 - fy) + bottom * fy
                        }
                        let rounded = (value + 0.5).clamped(lowerBound: .zero, upperBound: SIMD4(repeating: 255))
                        dst[d] = UInt8(rounded[0]); dst[d + 1] = UInt8(rounded[1])
                        dst[d + 2] = UInt8(rounded[2]); dst[d + 3] = UInt8(rounded[3])
                        d += 4
                    }
                }
            }
        }
        return output
    }
}
