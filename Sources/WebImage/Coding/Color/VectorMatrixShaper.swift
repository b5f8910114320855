import CColorKernel

/// ``MatrixShaperConversion``'s vectorised kernels (issue 28, `Sources/CLibraries/CColorKernel`):
/// the same conversion 64 pixels at a time in AVX-512 registers (about 0.85 ns a pixel on one
/// core where the scalar tables take 3.6–6.6), or 8 at a time in AVX2 (about 2 ns). The input
/// curves become 16-bit linear values (AVX-512: byte permutes over tables held in registers;
/// AVX2: gathers), the matrix is in single-precision floats, and sRGB's curve is a polynomial in
/// v^(1/4), within 0.05 of a level of the exact curve; all 2^24 colours of the tested profiles
/// agree with LittleCMS to within one level.
///
/// `nil` where the CPU has neither kernel (the scalar tables then run), or when the target
/// profile's curve is not sRGB's standard one: the polynomial is fitted to that curve, so it is
/// checked once against the target's own reversed curve (`toSRGB`) at every step.
struct VectorMatrixShaper: Sendable {
    /// The instruction sets, as `color_kernel.h` numbers them.
    enum Kernel: Int32, Sendable, Comparable {
        case avx2 = 1
        case avx512 = 2

        /// The best kernel this CPU runs, `nil` for none.
        static let best = Kernel(rawValue: webimage_color_kernel_available())

        static func < (lhs: Kernel, rhs: Kernel) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    let kernel: Kernel
    private let tables: webimage_color_tables

    /// `linear[channel * 256 + level]`: each input level through its channel's curve, in [0, 1];
    /// `matrix`: row-major linear source → linear sRGB; `toSRGB`: the target's reversed curve
    /// at `toSRGB.count` even steps of [0, 1]; `kernel`: the one to use, or the best this CPU
    /// runs if it lacks that one (`nil` if it runs none).
    init?(linear: [Double], matrix: [Float], toSRGB: [UInt8], kernel wanted: Kernel) {
        guard let best = Kernel.best, linear.count == 768, matrix.count == 9, toSRGB.count > 1 else { return nil }
        let kernel = min(wanted, best)
        var tables = webimage_color_tables()
        withUnsafeMutableBytes(of: &tables.low) { low in
            withUnsafeMutableBytes(of: &tables.high) { high in
                for (index, value) in linear.enumerated() {
                    let word = Int((min(max(value, 0), 1) * 65535).rounded())
                    low[index] = UInt8(word & 0xFF)
                    high[index] = UInt8(word >> 8)
                }
            }
        }
        // The kernel reads each 16-bit value w as w × 65537 (see color_kernel.h).
        withUnsafeMutableBytes(of: &tables.matrix) { raw in
            for (index, value) in matrix.enumerated() {
                raw.storeBytes(of: Float(Double(value) / 4_294_967_295), toByteOffset: index * 4, as: Float.self)
            }
        }
        webimage_color_prepare(&tables)
        let steps = toSRGB.count
        let probe = (0..<steps).map { Float($0) / Float(steps - 1) }
        var encoded = [UInt8](repeating: 0, count: steps)
        webimage_color_encode(kernel.rawValue, probe, &encoded, steps)
        guard zip(encoded, toSRGB).allSatisfy({ abs(Int($0) - Int($1)) <= 1 }) else { return nil }
        self.tables = tables
        self.kernel = kernel
    }

    /// Converts `rows` rows of `width` opaque RGBA8 pixels in place (alpha untouched); rows may
    /// start at any address.
    func convert(_ pixels: UnsafeMutableRawPointer, stride: Int, width: Int, rows: Int) {
        guard width > 0 else { return }
        withUnsafePointer(to: tables) { tables in
            for row in 0..<rows {
                webimage_color_convert(tables, kernel.rawValue, (pixels + row * stride).assumingMemoryBound(to: UInt8.self), width)
            }
        }
    }
}
