// One pipeline for a whole server process: a shared (RFC 9111) cache, image work on threads of
// its own, a memory budget, and a per-user header that keeps users' images apart.
//
//     swift run OnAServer https://example.com/avatar.jpg TOKEN
import Foundation
import WebImage

// snippet.configure
var configuration = ImagePipeline.Configuration()
configuration.dataCache = try DiskCache(directory: URL(fileURLWithPath: "/tmp/webimage-server-cache"))
// Many users share this cache: no `private` responses, no authorized ones unless they allow it.
configuration.httpCachePolicy.isShared = true
// Decoding and resizing leave Swift's cooperative pool to the server's request handling.
configuration.workExecutor = ImageWorkExecutor(threads: 2)
// Pixels in flight may take at most 512 MB; past it, work waits, then fails with `overBudget`.
configuration.memoryBudget = MemoryBudget(limit: 512 << 20)
// `Authorization` and cookies always separate callers; this header does too.
configuration.identity = .headers(["X-Tenant"])
let pipeline = ImagePipeline(configuration: configuration)

// snippet.handler
/// What a route handler calls: a 128-pixel thumbnail of the user's avatar, as WebP bytes.
func thumbnail(of url: URL, authorization: String?) async throws -> Data {
    var request = ImageRequest(url: url).thumbnail(maxPixelSize: 128)
    if let authorization { request = request.header("Authorization", authorization) }
    let image = try await pipeline.image(for: request).image
    return try ImageExport(maxSize: (128, 128), format: .webp).export(image).data
}
// snippet.end

let arguments = CommandLine.arguments.dropFirst()
if let address = arguments.first, let url = URL(string: address) {
    let bytes = try await thumbnail(of: url, authorization: arguments.dropFirst().first.map { "Bearer \($0)" })
    print("\(bytes.count) bytes of WebP")
}
