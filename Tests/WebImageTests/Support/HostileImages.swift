import Foundation
import WebImage

/// Small files that ask for a lot of work: extreme aspect ratios and the like, encoded by the
/// real coders.
enum HostileImages {
    /// A `width × height` PNG of a grey ramp (a tall or wide strip compresses to a few bytes a row).
    /// Made off the cooperative pool: a million pixels are seconds of a debug build's loop.
    static func strip(width: Int, height: Int) async throws -> Data {
        try await offPool { try makeStrip(width: width, height: height) }
    }

    private static func makeStrip(width: Int, height: Int) throws -> Data {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for index in 0..<(width * height) {
            let value = UInt8(truncatingIfNeeded: index)
            pixels[index * 4] = value
            pixels[index * 4 + 1] = value
            pixels[index * 4 + 2] = value
        }
        let image = Image(format: .png, pixelWidth: width, pixelHeight: height, pixels: pixels, isOpaque: true)
        return try ImageCoderRegistry.default.encode(image, as: .png, quality: 1)
    }

    /// A `side × side` PNG of smooth gradients: a full decode and a slow chain of blurs (made
    /// off the cooperative pool, as ``strip(width:height:)``).
    static func gradient(side: Int) async throws -> Data {
        try await offPool { try makeGradient(side: side) }
    }

    private static func makeGradient(side: Int) throws -> Data {
        var pixels = [UInt8](repeating: 255, count: side * side * 4)
        for y in 0..<side {
            for x in 0..<side {
                let offset = (y * side + x) * 4
                pixels[offset] = UInt8(truncatingIfNeeded: x * 255 / side)
                pixels[offset + 1] = UInt8(truncatingIfNeeded: y * 255 / side)
                pixels[offset + 2] = UInt8(truncatingIfNeeded: (x + y) * 127 / side)
            }
        }
        let image = Image(format: .png, pixelWidth: side, pixelHeight: side, pixels: pixels, isOpaque: true)
        return try ImageCoderRegistry.default.encode(image, as: .png, quality: 1)
    }
}

/// What Linux says of a running process: peak resident memory and CPU time used so far.
enum ProcessUsage {
    /// `VmHWM` of `/proc/PID/status`, in bytes.
    static func peakResidentBytes(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// User plus system CPU time (`utime` + `stime` of `/proc/PID/stat`), in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
