// The colour conversion kernels on one decoded 12 MP Adobe RGB JPEG, in one process (built by
// scripts/measure/measure-color-conversion with swiftc -O from the library's own MatrixShaperConversion.swift,
// VectorMatrixShaper.swift and C kernel, and an older MatrixShaperConversion.swift, renamed
// OldMatrixShaperConversion): TurboJPEG decode, old and new fast path (the new one's AVX-512 kernel where the
// CPU has it, and its scalar tables), the new one in 2 bands, and LittleCMS's TYPE_RGBA_8 transform (what
// Pillow's ImageCms runs). Wall and CPU medians.
import CLcms2
import CTurboJPEG
import Dispatch
import Foundation

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e6 }
func cpu() -> Double { var t = timespec(); clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6 }
let data = try! Data(contentsOf: URL(fileURLWithPath: "\(CommandLine.arguments[1])"))
let (W, H) = (4000, 3000)
let handle = tjInitDecompress()!
func decode() -> [UInt8] {
    var pixels = [UInt8](unsafeUninitializedCapacity: W * H * 4) { _, c in c = W * H * 4 }
    data.withUnsafeBytes { src in pixels.withUnsafeMutableBufferPointer { dst in
        _ = tjDecompress2(handle, src.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(src.count), dst.baseAddress, Int32(W), Int32(4 * W), Int32(H), Int32(TJPF_RGBA.rawValue), 0) } }
    return pixels
}
let adobeBytes = try! Data(contentsOf: URL(fileURLWithPath: "/usr/share/color/icc/colord/AdobeRGB1998.icc"))
let adobe = adobeBytes.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, cmsUInt32Number($0.count)) }!
let srgb = cmsCreate_sRGBProfile()!
let fast = MatrixShaperConversion(source: adobe, sRGB: srgb)!
let old = OldMatrixShaperConversion(source: adobe, sRGB: srgb)!
let scalar = MatrixShaperConversion(source: adobe, sRGB: srgb, kernel: nil)!
let avx2 = MatrixShaperConversion(source: adobe, sRGB: srgb, kernel: .avx2)
print("new kernel:", fast.kernel.map { "\($0)" } ?? "scalar tables")
let lcms = cmsCreateTransform(adobe, webimage_lcms_rgba8(), srgb, webimage_lcms_rgba8(), cmsUInt32Number(INTENT_PERCEPTUAL), cmsUInt32Number(cmsFLAGS_COPY_ALPHA))!
let lcmsAddress = Int(bitPattern: lcms)
func bands(_ n: Int, _ base: UnsafeMutableRawPointer, _ body: @Sendable (Int, Int, Int) -> Void) {
    let address = Int(bitPattern: base)
    if n == 1 { return body(address, 0, H) }
    let per = (H + n - 1) / n
    DispatchQueue.concurrentPerform(iterations: n) { b in let f = b * per; if f < H { body(address, f, min(per, H - f)) } }
}
let decoded = decode()
var results: [String: [(Double, Double)]] = [:]
var outputs: [String: [UInt8]] = [:]
let runs = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 7 : 7
for round in 0...runs {
    var t = now(), c = cpu()
    _ = decode()
    if round > 0 { results["decode", default: []].append((now() - t, cpu() - c)) }
    let cases: [(String, Int, @Sendable (Int, Int, Int) -> Void)] = [
        ("old kernel, 1 thread", 1, { a, f, n in old.convert(UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!, stride: 4 * W, width: W, rows: n) }),
        ("new kernel, 1 thread", 1, { a, f, n in fast.convert(UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!, stride: 4 * W, width: W, rows: n) }),
        ("new, AVX2 kernel, 1 thread", 1, { a, f, n in (avx2 ?? scalar).convert(UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!, stride: 4 * W, width: W, rows: n) }),
        ("new, scalar tables, 1 thread", 1, { a, f, n in scalar.convert(UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!, stride: 4 * W, width: W, rows: n) }),
        ("new kernel, 2 bands", 2, { a, f, n in fast.convert(UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!, stride: 4 * W, width: W, rows: n) }),
        ("LittleCMS RGBA_8, 1 thread", 1, { a, f, n in let p = UnsafeMutableRawPointer(bitPattern: a + f * 4 * W)!; cmsDoTransformLineStride(UnsafeMutableRawPointer(bitPattern: lcmsAddress), p, p, cmsUInt32Number(W), cmsUInt32Number(n), cmsUInt32Number(4 * W), cmsUInt32Number(4 * W), 0, 0) }),
    ]
    for (name, n, body) in cases {
        var buffer = decoded
        buffer[0] = buffer[0]  // unique, faulted in
        t = now(); c = cpu()
        buffer.withUnsafeMutableBytes { bands(n, $0.baseAddress!, body) }
        if round > 0 { results[name, default: []].append((now() - t, cpu() - c)) } else { outputs[name] = buffer }
    }
}
func median(_ v: [Double]) -> Double { let s = v.sorted(); return s[s.count / 2] }
let decodeWall = median(results["decode"]!.map(\.0))
for name in ["decode", "old kernel, 1 thread", "new kernel, 1 thread", "new, AVX2 kernel, 1 thread", "new, scalar tables, 1 thread", "new kernel, 2 bands", "LittleCMS RGBA_8, 1 thread"] {
    let wall = median(results[name]!.map(\.0)), cpuTime = median(results[name]!.map(\.1))
    print(name.padding(toLength: 28, withPad: " ", startingAt: 0), String(format: "wall %7.1f ms  cpu %7.1f ms  %5.1f %% of decode  %.2f ns/px cpu", wall, cpuTime, 100 * wall / decodeWall, cpuTime * 1e6 / Double(W * H)))
}
let reference = outputs["LittleCMS RGBA_8, 1 thread"]!
for name in ["old kernel, 1 thread", "new kernel, 1 thread", "new, AVX2 kernel, 1 thread", "new, scalar tables, 1 thread", "new kernel, 2 bands"] {
    let d = zip(outputs[name]!, reference).map { abs(Int($0) - Int($1)) }
    print(name, "vs LittleCMS: max", d.max()!, "mean", String(format: "%.4f", Double(d.reduce(0, +)) / Double(d.count)))
}
