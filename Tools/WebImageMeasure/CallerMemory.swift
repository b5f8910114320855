import Foundation
import WebImage
import WebImageOrigin

/// Memory each waiting caller holds: `count` callers of one slow image (the origin delays it
/// 3 s) through a new pipeline, against `count` bare tasks waiting on a continuation; the
/// resident set read before and while they wait.
func measureCallerMemory(count: Int) async throws {
    func inUse() -> Int { status("VmRSS") * 1024 }
    let waiters = BareWaiters()
    var before = inUse()
    let bare = (0..<count).map { _ in Task.detached { await waiters.wait() } }
    while waiters.count < count { try await Task.sleep(for: .milliseconds(10)) }
    print("bare task waiting on a continuation: \(Double(inUse() - before) / Double(count)) bytes each")
    waiters.resumeAll()
    for task in bare { _ = await task.value }

    let origin = try await ImageOrigin.start(files: ["photo.jpg": try SampleImages.jpeg(width: 200, height: 200, seed: 1)])
    let url = origin.imageURL("photo.jpg", query: "delay=3000")
    let pipeline = ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil))
    _ = try await ImagePipeline(configuration: .init(memoryCache: nil, dataCache: nil)).image(for: origin.imageURL("photo.jpg"))
    before = inUse()
    let callers = (0..<count).map { _ in Task.detached { _ = try await pipeline.image(for: url) } }
    try await Task.sleep(for: .seconds(1))
    print("pipeline caller waiting on one image: \(Double(inUse() - before) / Double(count)) bytes each")
    for caller in callers { try await caller.value }
    await origin.stop()
}
