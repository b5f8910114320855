import Foundation
import WebImage
import WebImageOrigin

/// Memory each waiting caller holds: `count` callers of one slow image (the origin delays it
/// 3 s) through a new pipeline, against `count` bare tasks waiting on a continuation. Each group
/// is measured in a process of its own (this tool run again), as the rise of its resident set:
/// measured one after the other in one process, the second group reused the pages the first
/// had freed and showed almost nothing.
func measureCallerMemory(count: Int) throws {
    for group in ["bare", "pipeline"] {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["caller-memory-\(group)", String(count)]
        try child.run()
        child.waitUntilExit()
    }
}

/// One group of ``measureCallerMemory(count:)``, in this process.
func measureCallerMemory(count: Int, group: String) async throws {
    func resident() -> Int { status("VmRSS") * 1024 }
    if group == "bare" {
        let waiters = BareWaiters<Int>(expected: count)
        let before = resident()
        let bare = (0..<count).map { _ in Task.detached { await waiters.wait() } }
        await waiters.waitUntilAllIn()
        print("bare task waiting on a continuation: \(Double(resident() - before) / Double(count)) bytes each")
        waiters.resumeAll(with: 1)
        for task in bare { _ = await task.value }
        return
    }
    let origin = try await ImageOrigin.start(files: ["photo.jpg": try SampleImages.jpeg(width: 200, height: 200, seed: 1)])
    let url = origin.imageURL("photo.jpg", query: "delay=3000")
    let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
    _ = try await ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil)).image(for: origin.imageURL("photo.jpg"))
    let before = resident()
    let callers = (0..<count).map { _ in Task.detached { _ = try await pipeline.image(for: url) } }
    try await Task.sleep(for: .seconds(1))
    print("pipeline caller waiting on one image: \(Double(resident() - before) / Double(count)) bytes each")
    for caller in callers { try await caller.value }
    await origin.stop()
}
