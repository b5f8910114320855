import Benchmark
import Foundation
import WebImage
import WebImageOrigin

// Decoding speed per format, and the 4000×3000 JPEG → 256 px thumbnail against Pillow.
// Megapixels per second = the megapixels in the benchmark's name / its wall-clock time.
// The peer: `scripts/peers/peer-thumbnail.py` (Pillow `draft` + `thumbnail`) on the same file, which
// the fixtures write to `thumbnailSourcePath`.

/// Where the 4000×3000 JPEG is written for the peer script.
let thumbnailSourcePath = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-4000x3000.jpg").path

/// Encoded inputs, made once (a global `let` is initialised lazily and thread-safely).
struct CodingFixtures: Sendable {
    let jpeg12MP: Data
    let jpeg1MP: Data
    let png1MP: Data
    let webpLossy1MP: Data
    let webpLossless1MP: Data
    let gif10Frames: Data
    let avif1MP: Data
    let heic1MP: Data

    init() throws {
        jpeg12MP = try SampleImages.jpeg(width: 4000, height: 3000, seed: 21, quality: 0.85)
        try jpeg12MP.write(to: URL(fileURLWithPath: thumbnailSourcePath))
        jpeg1MP = try SampleImages.jpeg(width: 1000, height: 1000, seed: 1)  // as the pipeline benchmarks' photo
        png1MP = try SampleImages.png(width: 1000, height: 1000, seed: 22, alpha: true)
        webpLossy1MP = try SampleImages.webp(width: 1000, height: 1000, seed: 23, quality: 0.8)
        webpLossless1MP = try SampleImages.webp(width: 1000, height: 1000, seed: 24, quality: 1)
        gif10Frames = try SampleImages.gif(width: 500, height: 200, count: 10)  // 1 MP over all frames
        avif1MP = try SampleImages.avif(width: 1000, height: 1000, seed: 25, quality: 0.7)
        heic1MP = try SampleImages.heic(width: 1000, height: 1000, seed: 26, quality: 0.7)
    }
}

let codingFixtures: CodingFixtures = {
    do { return try CodingFixtures() } catch { fatalError("coding fixtures: \(error)") }
}()

/// Decodes take milliseconds: the default (automatic) unit would export whole milliseconds,
/// too coarse for the wrapper-against-library ratios.
var decodeConfiguration: Benchmark.Configuration { .init(timeUnits: .microseconds) }

/// Registers the coding benchmarks; called from the `benchmarks` closure.
func codingBenchmarks() {
    let decodes: [(String, @Sendable () -> Data)] = [
        ("Decode JPEG 12 MP (4000×3000)", { codingFixtures.jpeg12MP }),
        ("Decode PNG 1 MP RGBA", { codingFixtures.png1MP }),
        ("Decode WebP lossy 1 MP", { codingFixtures.webpLossy1MP }),
        ("Decode WebP lossless 1 MP", { codingFixtures.webpLossless1MP }),
        ("Decode GIF 1 MP (500×200 × 10 frames)", { codingFixtures.gif10Frames }),
        ("Decode AVIF 1 MP", { codingFixtures.avif1MP }),
        ("Decode HEIF 1 MP", { codingFixtures.heic1MP }),
    ]
    for (name, input) in decodes {
        Benchmark(name, configuration: decodeConfiguration) { benchmark in
            let data = input()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try ImageCoderRegistry.default.decode(data))
            }
        }
    }

    Benchmark("Thumbnail 256 px from JPEG 4000×3000 (DCT scaling + resampler)", configuration: decodeConfiguration) { benchmark in
        let data = codingFixtures.jpeg12MP
        let options = ImageDecodingOptions(thumbnailMaxPixelSize: 256)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try ImageCoderRegistry.default.decode(data, options: options))
        }
    }

    Benchmark("Thumbnail 256 px from JPEG 4000×3000 (full decode + resampler)", configuration: decodeConfiguration) { benchmark in
        let data = codingFixtures.jpeg12MP
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try ImageCoderRegistry.default.decode(data).resized(toFitWidth: 256, height: 256))
        }
    }
}
