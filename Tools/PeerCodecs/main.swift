// Decodes one file REPS times with the registry (the TIFF and JPEG XL coders) and prints the
// median milliseconds and megapixels per second. Built by scripts/peers/peer-codecs with `swiftc -O`
// together with the Coding and Processing sources (as scripts/fuzz does); not a package target.
import Foundation

@main
struct PeerCodecs {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 3, let reps = Int(arguments[2]), let data = FileManager.default.contents(atPath: arguments[1]) else {
            FileHandle.standardError.write(Data("usage: decode FILE REPS\n".utf8))
            exit(64)
        }
        var times: [Double] = []
        var pixels = 0
        for _ in 0..<max(reps, 1) {
            let start = ContinuousClock.now
            let image = try ImageCoderRegistry.default.decode(data)
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
            pixels = image.pixelWidth * image.pixelHeight * max(image.frames.count, 1)
        }
        let median = times.sorted()[times.count / 2]
        print(String(format: "%.3f ms %.1f MP/s", median, Double(pixels) / median / 1e3))
    }
}
