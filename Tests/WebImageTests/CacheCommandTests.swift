import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("webimage cache stats|verify|trim|clear, and the origin's /cache routes")
struct CacheCommandTests {
    struct StatsOutput: Decodable {
        var directory: String
        var statistics: DiskCache.Statistics
    }

    @Test func statsVerifyTrimClearWithJSON() async throws {
        let directory = temporaryDirectory()
        do {
            let cache = try DiskCache(directory: directory)
            for i in 0..<10 { try await cache.store(CacheSamples.bytes(for: "k\(i)"), for: "k\(i)") }
            _ = cache.entry(for: "k1")
            _ = cache.entry(for: "missing")
        }
        let total = (0..<10).map { CacheSamples.bytes(for: "k\($0)").count }.reduce(0, +)

        let stats = try await WebImageCommand.run(["cache", "stats", "--cache-dir", directory.path, "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let output = try decoder.decode(StatsOutput.self, from: Data(stats.stdout.utf8))
        #expect(output.statistics.count == 10 && output.statistics.totalSize == total)
        #expect(output.statistics.hits == 1 && output.statistics.misses == 1 && output.statistics.oldestAccess != nil)

        // Damage one file, then verify.
        let files = directory.appendingPathComponent("files")
        let victim = files.appendingPathComponent(try FileManager.default.contentsOfDirectory(atPath: files.path).sorted()[0])
        try Data(count: 100).write(to: victim)
        let verify = try await WebImageCommand.run(["cache", "verify", "--cache-dir", directory.path, "--json"])
        let report = try JSONDecoder().decode(DiskCache.VerifyReport.self, from: Data(verify.stdout.utf8))
        #expect(report.checked == 10 && report.damaged.count == 1)

        let text = try await WebImageCommand.run(["cache", "stats", "--cache-dir", directory.path])
        #expect(text.stdout.contains("9 images") && text.stdout.contains("1 damaged"))

        let trim = try await WebImageCommand.run(["cache", "trim", "--cache-dir", directory.path, "--cache-size-mb", "0.05", "--json"])
        #expect(trim.status == 0, "\(trim.stderr)")
        let trimmed = try JSONDecoder().decode([String: Int].self, from: Data(trim.stdout.utf8))
        #expect(trimmed["bytes"]! <= 50_000 && trimmed["evicted"]! > 0)

        let aged = try await WebImageCommand.run(["cache", "trim", "--cache-dir", directory.path, "--cache-max-age", "0", "--json"])
        #expect(try JSONDecoder().decode([String: Int].self, from: Data(aged.stdout.utf8))["count"] == 0)

        try await DiskCache(directory: directory).store(Data([1]), for: "again")
        let clear = try await WebImageCommand.run(["cache", "clear", "--cache-dir", directory.path])
        #expect(clear.status == 0 && clear.stdout.contains("removed 1 images"))
        #expect(try DiskCache(directory: directory).statistics().count == 0)
    }

    @Test func cacheRoutesSendTheAskedHeadersAndAnswer304() async throws {
        try await withOrigin { origin in
            func get(_ path: String, _ headers: [(String, String)] = []) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: origin.url(path).absoluteString)
                for (name, value) in headers { request.headers.add(name: name, value: value) }
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 24)
                return response
            }
            let plain = try await get("/cache/photo.jpg")
            #expect(plain.status == .ok && plain.headers["Cache-Control"].isEmpty && plain.headers["Last-Modified"].isEmpty)
            let etag = try #require(plain.headers["ETag"].first)

            let controlled = try await get("/cache/photo.jpg?cc=max-age%3D60%2C%20public&expires=30&lm=1")
            #expect(controlled.headers["Cache-Control"] == ["max-age=60, public"])
            #expect(controlled.headers["Expires"].count == 1 && controlled.headers["Date"].count == 1)
            let modified = try #require(controlled.headers["Last-Modified"].first)
            #expect(try await get("/cache/photo.jpg?etag=0").headers["ETag"].isEmpty)

            let revalidated = try await get("/cache/photo.jpg?cc=no-cache", [("If-None-Match", etag)])
            #expect(revalidated.status == .notModified && revalidated.headers["Cache-Control"] == ["no-cache"])
            #expect(try await get("/cache/photo.jpg?lm=1&etag=0", [("If-Modified-Since", modified)]).status == .notModified)
            #expect(try await get("/cache/photo.jpg?lm=1&etag=0", [("If-Modified-Since", "Fri, 31 Oct 2025 00:00:00 GMT")]).status == .ok)

            // The image changes at the origin: a new ETag, so the old one no longer matches.
            #expect(try await get("/cache-admin/swap/photo.jpg?to=logo.png").status == .ok)
            let swapped = try await get("/cache/photo.jpg", [("If-None-Match", etag)])
            #expect(swapped.status == .ok && swapped.headers["ETag"].first != etag)
            #expect(swapped.headers["Content-Type"] == ["image/png"])
            _ = try await get("/cache-admin/reset")
            #expect(try await get("/cache/photo.jpg", [("If-None-Match", etag)]).status == .notModified)
            #expect(origin.requestCount(path: "/cache/photo.jpg") == 8)
        }
    }

    @Test func cachesManagerPolicies() async throws {
        let fast = try DiskCache(directory: temporaryDirectory()), slow = try DiskCache(directory: temporaryDirectory())
        try await slow.store(Data([2]), for: "only-slow")
        let serial = DataCachesManager(caches: [fast, slow], queryPolicy: .serial, storePolicy: .highestPriorityOnly)
        #expect(await serial.entry(for: "only-slow")?.data == Data([2]))
        try await serial.store(Data([1]), metadata: CacheMetadata(byteCount: 1), for: "new")
        #expect(fast.entry(for: "new") != nil && slow.entry(for: "new") == nil)
        let highest = DataCachesManager(caches: [fast, slow], queryPolicy: .highestPriorityOnly, storePolicy: .serial)
        #expect(await highest.entry(for: "only-slow") == nil)
        try await highest.store(Data([3]), metadata: CacheMetadata(byteCount: 1), for: "both")
        #expect(fast.entry(for: "both") != nil && slow.entry(for: "both") != nil)
        try await slow.store(Data([9]), for: "both")
        let concurrent = DataCachesManager(caches: [fast, slow], queryPolicy: .concurrent)
        #expect(await concurrent.entry(for: "both")?.data == Data([3]))  // the higher priority's hit
        let lowest = DataCachesManager(caches: [fast, slow], queryPolicy: .lowestPriorityOnly)
        #expect(await lowest.entry(for: "both")?.data == Data([9]))
        await concurrent.remove(key: "both")
        #expect(fast.entry(for: "both") == nil && slow.entry(for: "both") == nil)
        try await concurrent.removeAll()
        #expect(try fast.statistics().count == 0 && slow.statistics().count == 0)
    }
}
