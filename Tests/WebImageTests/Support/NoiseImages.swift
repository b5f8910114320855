import WebImage

/// Opaque RGBA noise (xorshift32, fixed seed): the hardest picture for every encoder, made in a
/// few tens of milliseconds even in a debug build (36 million `UInt8.random` calls took seconds of
/// a shared core).
enum NoiseImages {
    static func make(width: Int, height: Int, seed: UInt32 = 2_463_534_242) -> Image {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        pixels.withUnsafeMutableBufferPointer { buffer in
            var state = seed == 0 ? 1 : seed
            var i = 0
            while i < buffer.count {
                state ^= state << 13; state ^= state >> 17; state ^= state << 5
                buffer[i] = UInt8(truncatingIfNeeded: state)
                buffer[i + 1] = UInt8(truncatingIfNeeded: state >> 8)
                buffer[i + 2] = UInt8(truncatingIfNeeded: state >> 16)
                i += 4
            }
        }
        return Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: true)
    }
}
