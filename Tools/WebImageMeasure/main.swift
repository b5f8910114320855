// Peak-memory rise of one decode, measured inside the process (run by scripts/measure/measure-thumbnail-memory).
//
//   WebImageMeasure make PATH          writes the 4000×3000 JPEG the benchmarks use
//   WebImageMeasure make-progressive PATH   the same picture as a progressive JPEG
//   WebImageMeasure make-gif PATH      the GIF of the decode benchmarks (500×200, 10 frames)
//   WebImageMeasure make-png PATH      the PNG of the decode benchmarks (1000×1000 RGBA)
//   WebImageMeasure MODE PATH          MODE: none | thumbnail | full
//   WebImageMeasure loop PATH          decodes PATH 200 times (a steady load for `perf record`)
//   WebImageMeasure callers N          N callers of one URL through a new pipeline, 20 rounds (for
//                                      `perf record`); prints the median cost per caller, and per
//                                      extra caller: (time for N − time for one) ÷ (N − 1)
//   WebImageMeasure memory-hit N       N memory hits through image(for:), 20 rounds; ns per hit
//   WebImageMeasure sync-hit N         the same through cachedImage(forKey:)
//   WebImageMeasure caller-memory N    resident bytes each of N waiting callers adds, pipeline against a bare task
//                                      (each group in a process of its own)
//   WebImageMeasure floor N            N tasks that each wait on a continuation one job resumes:
//                                      what any sharing costs per caller on this machine
//   WebImageMeasure floor-shared N     the same, each task receiving one reference to one shared
//                                      object, as each caller of one image gets its response
//   WebImageMeasure disk-hit ROUNDS    200 × 50 KB disk-cache hits (data only) and FileManager reads
//                                      of the same bytes, alternating, ROUNDS times; ns per read each
//   WebImageMeasure chunks ROUNDS      per-chunk cost of progressive WebP, JPEG and PNG previews at 10/50/90 %
//                                      of a 3 MP file: incremental decoder against prefix re-decode
//   WebImageMeasure download URL LOADER  one download into memory with LOADER (asynchttpclient or
//                                      urlsession); scripts/measure/measure-memory compares their peaks
//
// Reads the file, then resets the kernel's peak-RSS mark (`5` → /proc/self/clear_refs sets
// VmHWM to the current VmRSS), decodes, and prints one JSON line: the resident set before the
// decode and the peak during it (KiB). The rise is what the decode itself needed at its worst.
import Foundation
import WebImage
import WebImageOrigin
import WebImageURLSession

func status(_ key: String) -> Int {
    let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
        return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") ?? -1
    }
    return -1
}

/// CPU time this process has used, all threads (ns).
func processCPUTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
    return Double(now.tv_sec) * 1e9 + Double(now.tv_nsec)
}

/// `n` callers of `url`, made and awaited off the main actor, as a server's request handlers
/// are: callers made on the main actor each hopped back to it at the end, and the one main
/// thread, woken for every caller, became what was measured (4.3 µs a caller against 2.2).
/// Unstructured tasks: a task group's child removal searches its list (O(n²) for 10,000).
/// Returns when the last caller was made.
func callImage(_ n: Int, pipeline: ImagePipeline, url: URL) async throws -> ContinuousClock.Instant {
    let callers = (0..<n).map { _ in Task { _ = try await pipeline.image(for: url) } }
    let created = ContinuousClock.now
    for caller in callers { try await caller.value }
    return created
}

/// The floor's callers, made and awaited the same way as ``callImage(_:pipeline:url:)``'s.
func waitAll<Value: Sendable>(_ count: Int, _ waiters: BareWaiters<Value>, resumingWith value: Value) async {
    let callers = (0..<count).map { _ in Task { _ = await waiters.wait() } }
    await waiters.waitUntilAllIn()
    waiters.resumeAll(with: value)
    for caller in callers { _ = await caller.value }
}

let arguments = CommandLine.arguments
if arguments.count == 3, let count = Int(arguments[2]), arguments[1] == "caller-memory" {
    try measureCallerMemory(count: count)
    exit(0)
}
if arguments.count == 3, let count = Int(arguments[2]), ["caller-memory-bare", "caller-memory-pipeline"].contains(arguments[1]) {
    try await measureCallerMemory(count: count, group: String(arguments[1].dropFirst("caller-memory-".count)))
    exit(0)
}
if arguments.count == 3, let rounds = Int(arguments[2]), arguments[1] == "chunks" {
    try measureChunkCost(rounds: rounds)
    exit(0)
}
if arguments.count == 3, let count = Int(arguments[2]), ["floor", "floor-shared"].contains(arguments[1]) {
    var perCall: [Double] = [], cpu: [Double] = []
    for _ in 0..<20 {
        let started = ContinuousClock.now, startedCPU = processCPUTime()
        if arguments[1] == "floor" {
            await waitAll(count, BareWaiters<Int>(expected: count), resumingWith: 1)
        } else {
            await waitAll(count, BareWaiters<SharedResult>(expected: count), resumingWith: SharedResult())
        }
        perCall.append(Double((ContinuousClock.now - started) / .nanoseconds(1)) / Double(count))
        cpu.append((processCPUTime() - startedCPU) / Double(count))
    }
    print("median \(perCall.sorted()[perCall.count / 2]) ns per call; CPU time \(cpu.sorted()[cpu.count / 2]) ns per call")
    exit(0)
}
if arguments.count == 3, let count = Int(arguments[2]), ["callers", "memory-hit", "sync-hit"].contains(arguments[1]) {
    let origin = try await ImageOrigin.start(files: ["photo.jpg": try SampleImages.jpeg(width: 1000, height: 1000, seed: 1)])
    let hold = Duration.milliseconds(300)
    let url = origin.imageURL("photo.jpg"), heldURL = origin.imageURL("photo.jpg", query: "delay=\(Int(hold / .milliseconds(1)))")
    let warm = ImagePipeline()
    _ = try await warm.image(for: url)
    var perCall: [Double] = []
    var single: [Double] = []  // callers: one caller's whole load in the same round
    var cpu: [Double] = [], singleCPU: [Double] = []  // the same in the process's CPU time
    for _ in 0..<20 {
        if arguments[1] == "callers" {
            for n in [1, count] {
                let started = ContinuousClock.now, startedCPU = processCPUTime()
                let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
                // The origin holds the response 300 ms, so that every caller joins the one job
                // (the issue's measure: one request, one decode). Without it, callers made after
                // the job had finished started 2–3 more downloads on a loaded machine.
                let created = try await callImage(n, pipeline: pipeline, url: heldURL)
                // The hold is idle time, not the callers' cost; making the callers happened during
                // it, so that part is counted back in.
                let busy = ContinuousClock.now - started - hold + (created - started)
                let elapsed = Double(busy / .nanoseconds(1)), used = processCPUTime() - startedCPU
                let work = pipeline.statistics
                guard work.downloads == 1, work.decodes == 1 else {
                    print("\(n) callers made \(work.downloads) downloads and \(work.decodes) decodes, not one each")
                    exit(1)
                }
                if n == 1 {
                    single.append(elapsed)
                    singleCPU.append(used)
                } else {
                    perCall.append(elapsed / Double(count))
                    cpu.append(used)
                }
            }
            continue
        }
        let started = ContinuousClock.now
        if arguments[1] == "sync-hit" {
            let key = url.absoluteString
            try await Task.detached { for _ in 0..<count { _ = warm.cachedImage(forKey: key) } }.value
        } else {
            // Off the main actor (top-level code runs on it): a hop per call would be measured.
            try await Task.detached { for _ in 0..<count { _ = try await warm.image(for: url) } }.value
        }
        perCall.append(Double((ContinuousClock.now - started) / .nanoseconds(1)) / Double(count))
    }
    await origin.stop()
    let median = perCall.sorted()[perCall.count / 2]
    print("median \(median) ns per call")
    if let one = single.sorted().dropFirst(single.count / 2).first, count > 1 {
        // The one download and decode are shared: what each caller beyond the first adds.
        print("one caller \(one) ns; per extra caller \((median * Double(count) - one) / Double(count - 1)) ns")
        // CPU time is what a caller costs when other processes share the cores (wall time then
        // includes their turns); with both cores free the two agree.
        let (cpuAll, cpuOne) = (cpu.sorted()[cpu.count / 2], singleCPU.sorted()[singleCPU.count / 2])
        print("CPU time per extra caller \((cpuAll - cpuOne) / Double(count - 1)) ns")
    }
    exit(0)
}
if arguments.count == 3, let rounds = Int(arguments[2]), arguments[1] == "disk-hit" {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-measure-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    let cache = try DiskCache(directory: root.appendingPathComponent("cache"), configuration: .init(synchronousWrites: false))
    let plain = root.appendingPathComponent("plain")
    try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
    let keys = (0..<200).map { "https://example.com/images/\($0).jpg" }
    let files = (0..<200).map { plain.appendingPathComponent("\($0).jpg").path }
    let noise = Data((0..<50_000).map { _ in UInt8.random(in: 0...255) })
    for (n, (key, file)) in zip(keys, files).enumerated() {
        var bytes = noise
        bytes[n] ^= 0xFF  // each entry differs
        try cache.store(bytes, for: key)
        FileManager.default.createFile(atPath: file, contents: bytes)
    }
    let clock = ContinuousClock()
    var disk: Duration = .zero, read: Duration = .zero
    for _ in 0..<rounds {
        for (key, file) in zip(keys, files) {
            disk += clock.measure { precondition(cache.entry(for: key)?.data.count == 50_000) }
            read += clock.measure { precondition(FileManager.default.contents(atPath: file)?.count == 50_000) }
        }
    }
    let reads = Double(rounds * keys.count)
    let (diskNs, readNs) = (Double(disk / .nanoseconds(1)) / reads, Double(read / .nanoseconds(1)) / reads)
    print("disk hit \(Int(diskNs)) ns, FileManager \(Int(readNs)) ns, ratio \(String(format: "%.2f", readNs / diskNs))")
    exit(0)
}
if arguments.count == 4, arguments[1] == "download", let url = URL(string: arguments[2]) {
    // One download into memory with the named loader (scripts/measure/measure-memory compares their peaks).
    var configuration = ImageDownloaderConfiguration()
    configuration.maxBodySize = 256 << 20
    let loader: any DataLoading = arguments[3] == "urlsession" ? URLSessionDataLoader() : HTTPDataLoader()
    let result = try await ImageDownloader(loader: loader, configuration: configuration).download(url)
    print(result.data.count)
    exit(0)
}
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: WebImageMeasure make|none|thumbnail|full PATH, or download URL asynchttpclient|urlsession\n".utf8))
    exit(2)
}
let (mode, path) = (arguments[1], arguments[2])
if mode == "make" || mode == "make-progressive" {
    let picture = SampleImages.pattern(width: 4000, height: 3000, seed: 21)
    let jpeg = try JPEGCoder(progressive: mode == "make-progressive").encode(picture, as: .jpeg, quality: 0.85)
    try jpeg.write(to: URL(fileURLWithPath: path))
    exit(0)
}
if mode == "make-gif" || mode == "make-png" {
    let sample = mode == "make-gif"
        ? try SampleImages.gif(width: 500, height: 200, count: 10) : try SampleImages.png(width: 1000, height: 1000, seed: 22, alpha: true)
    try sample.write(to: URL(fileURLWithPath: path))
    exit(0)
}
let data = try Data(contentsOf: URL(fileURLWithPath: path))
if mode == "loop" {
    for _ in 0..<200 { _ = try ImageCoderRegistry.default.decode(data) }
    exit(0)
}
// Touch the coder registry and the sniffing table before the mark, as a running app would have.
_ = ImageFormat(sniffing: data)
_ = try ImageCoderRegistry.default.readHeader(data)

try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
let before = status("VmRSS")
var size = "-"
switch mode {
case "none":
    break
case "thumbnail":
    let image = try ImageCoderRegistry.default.decode(data, options: .init(thumbnailMaxPixelSize: 256))
    size = "\(image.pixelWidth)x\(image.pixelHeight)"
case "full":
    let image = try ImageCoderRegistry.default.decode(data)
    size = "\(image.pixelWidth)x\(image.pixelHeight)"
default:
    FileHandle.standardError.write(Data("unknown mode \(mode)\n".utf8))
    exit(2)
}
let peak = status("VmHWM")
print(#"{"mode":"\#(mode)","size":"\#(size)","rss_before_kib":\#(before),"peak_kib":\#(peak),"rise_kib":\#(peak - before)}"#)
