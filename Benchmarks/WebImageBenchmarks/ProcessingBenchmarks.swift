import Benchmark
import Foundation
import WebImage
import WebImageOrigin

// Each processor on a 2 MP RGBA image (1600 × 1250). Megapixels per second = 2 / the p50
// wall-clock time. The peer: `scripts/peers/peer-process.py` runs these benchmarks and Pillow's same
// operations on the same picture, which the fixture writes to `processingSourcePath` as a PNG,
// and prints both rates and their ratio. The names after "Process " are the peer's keys.

/// Where the 2 MP source is written for the peer script.
let processingSourcePath = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-process.png").path

/// The decoded source, made once (a global `let` is initialised lazily and thread-safely).
let processingSource: Image = {
    let picture = SampleImages.pattern(width: 1600, height: 1250, seed: 31, alpha: true)
    do {
        try PNGCoder().encode(picture, as: .png, quality: 1).write(to: URL(fileURLWithPath: processingSourcePath))
        // The benchmarks process what decoding the file gives, as Pillow does.
        return try PNGCoder().decode(try Data(contentsOf: URL(fileURLWithPath: processingSourcePath)), options: .default)
    } catch { fatalError("processing fixture: \(error)") }
}()

/// The operations, by the peer script's key; parameters as in `scripts/peers/peer-process.py`.
let processingCases: [(String, any ImageProcessing)] = [
    ("resize-fit-800", .resize(width: 800, height: 800)),
    ("resize-fill-512", .resize(width: 512, height: 512, mode: .fill)),
    ("resize-upscale-2000", .resize(width: 2000, height: 2000, upscale: true)),
    ("crop", .crop(x: 100, y: 100, width: 1200, height: 900)),
    ("flip-h", .flip(.horizontal)),
    ("rotate-90", .rotate(degrees: 90)),
    ("rotate-30", .rotate(degrees: 30, background: .white)),
    ("round-40", .roundedCorners(radius: 40)),
    ("circle", .circle()),
    ("blur-4", .gaussianBlur(radius: 4)),
    ("tint", .tint(RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))),
    ("grayscale", .grayscale()),
]

/// Registers the processing benchmarks; called from the `benchmarks` closure.
func processingBenchmarks() {
    for (key, processor) in processingCases {
        Benchmark("Process \(key)", configuration: decodeConfiguration) { benchmark in
            let image = processingSource
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try processor.process(image))
            }
        }
    }
}
