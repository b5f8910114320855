// Times WebImage's decoders on files, for scripts/peer-decoders.py (built there with swiftc -O
// together with Sources/WebImage/Coding and Processing, like the fuzz target).
//   decode-timer RUNS FILE...   prints "FILE<TAB>median seconds" per file
import Foundation

@main
struct DecodeTimer {
    static func main() throws {
        let runs = Int(CommandLine.arguments[1]) ?? 10
        for path in CommandLine.arguments.dropFirst(2) {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var times: [Double] = []
            var frames = 0
            for _ in 0..<runs {
                let start = ContinuousClock.now
                let image = try ImageCoderRegistry.default.decode(data)
                let elapsed = ContinuousClock.now - start
                frames = max(image.frames.count, 1)
                times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            }
            times.sort()
            print("\(path)\t\(times[times.count / 2])\t\(frames)")
        }
    }
}
