// Times WebImage's decoders on files, for scripts/peers/peer-decoders.py (built there with swiftc -O
// together with the Coding layer through scripts/lib/build-c-targets.sh, like the fuzz target).
//   decode-timer RUNS FILE...   prints "FILE<TAB>median seconds<TAB>frames" per file
// Seconds are CPU time of the decoding thread: on a shared machine wall-clock time measures the
// scheduler as much as the decoder (the peers are timed the same way).
import Foundation

func threadSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

@main
struct DecodeTimer {
    static func main() throws {
        let runs = Int(CommandLine.arguments[1]) ?? 10
        for path in CommandLine.arguments.dropFirst(2) {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            var times: [Double] = []
            var frames = 0
            for _ in 0..<runs {
                let start = threadSeconds()
                let image = try ImageCoderRegistry.default.decode(data)
                times.append(threadSeconds() - start)
                frames = max(image.frames.count, 1)
            }
            times.sort()
            print("\(path)\t\(times[times.count / 2])\t\(frames)")
        }
    }
}
