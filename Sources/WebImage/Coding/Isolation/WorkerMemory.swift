/// How much memory a decode may take in its worker process (``DecodeIsolation/workerMemory``):
/// ``baseBytes`` plus ``bytesPerPixel`` for each pixel the decode makes (over its frames), past
/// what the worker held when the request arrived. The worker sets it as its data limit
/// (`RLIMIT_DATA`: heap, thread stacks and other private writable memory) before it decodes.
///
/// The header's size is checked before a worker starts, but a C decoder's own allocations are
/// not: a small file can make one ask for far more than its image (buffers per tile or group,
/// tables the bitstream sizes). In a worker with a limit such an allocation fails — the decode
/// ends with a typed error, or the worker ends and the decode is `corrupt` — and the server's
/// machine keeps its memory.
///
/// The default (256 MB and 16 bytes a pixel, four times the decoded image) is about twice what
/// the built-in decoders were measured to need (docs/architecture/coding.md).
///
/// ```swift
/// var isolation = DecodeIsolation(worker: .currentExecutable(arguments: ["decode-worker"]))
/// isolation.workerMemory = WorkerMemory(baseBytes: 512 << 20, bytesPerPixel: 24)  // more room
/// isolation.workerMemory = nil                                                   // no limit
/// ```
public struct WorkerMemory: Sendable, Hashable {
    public var baseBytes: Int
    public var bytesPerPixel: Int

    public init(baseBytes: Int = 256 << 20, bytesPerPixel: Int = 16) {
        self.baseBytes = baseBytes
        self.bytesPerPixel = bytesPerPixel
    }

    /// The limit for a decode of `pixels` pixels, in bytes (`Int.max` when that overflows:
    /// no limit).
    public func limit(forPixels pixels: Int) -> Int {
        let (perPixel, o1) = max(pixels, 0).multipliedReportingOverflow(by: max(bytesPerPixel, 0))
        let (sum, o2) = perPixel.addingReportingOverflow(max(baseBytes, 0))
        return o1 || o2 ? .max : sum
    }
}
