import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// Result and source caches, /health, /ready, /metrics.
    @Suite("Image server: caches and observability")
    struct ServerOperationsTests {
        @Test func resultsComeFromMemoryThenFromDiskAfterARestart() async throws {
            let directory = temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let configure: (inout ImageServerConfiguration) -> Void = {
                $0.resultCacheDirectory = directory.appendingPathComponent("results")
                $0.sourceCacheDirectory = directory.appendingPathComponent("sources")
            }
            try await withOrigin { origin in
                var firstETag: String?
                try await withImageServer(origin: origin, configure) { harness in
                    let first = try await harness.image("photo.jpg", [("w", "80")])
                    #expect(first.status == 200 && first.header("x-cache") == "miss")
                    #expect(first.header("server-timing")?.contains("decode;dur=") == true)
                    // Each stage as `name;dur=MILLISECONDS.TENTH` (RFC-style Server-Timing).
                    let stages = (first.header("server-timing") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    #expect(!stages.isEmpty && stages.allSatisfy { $0.wholeMatch(of: /[a-z]+;dur=[0-9]+\.[0-9]/) != nil }, "\(stages)")
                    let second = try await harness.image("photo.jpg", [("w", "80")])
                    #expect(second.header("x-cache") == "hit-memory" && second.body == first.body && second.header("etag") == first.header("etag"))
                    // Another parameter set is another entry; the source comes from the source cache.
                    let other = try await harness.image("photo.jpg", [("w", "81")])
                    #expect(other.header("x-cache") == "miss")
                    #expect(harness.origin.requestCount(path: "/images/photo.jpg") == 1)
                    firstETag = first.header("etag")
                }
                origin.resetCounts()
                try await withImageServer(origin: origin, configure) { harness in
                    let again = try await harness.image("photo.jpg", [("w", "80")])
                    #expect(again.status == 200 && again.header("x-cache") == "hit-disk" && again.header("etag") == firstETag)
                    // A conditional request against a cached result.
                    let conditional = try await harness.image("photo.jpg", [("w", "80")], headers: [("If-None-Match", firstETag ?? "")])
                    #expect(conditional.status == 304)
                    #expect(harness.origin.totalRequests == 0)
                }
            }
        }

        @Test func theResultKeyIncludesTheNegotiatedFormat() async throws {
            try await withImageServer { harness in
                let webp = try await harness.image("photo.jpg", [("w", "40")], headers: [("Accept", "image/webp")])
                let jpeg = try await harness.image("photo.jpg", [("w", "40")], headers: [("Accept", "image/jpeg")])
                #expect(webp.header("content-type") == "image/webp" && jpeg.header("content-type") == "image/jpeg")
                #expect(jpeg.header("x-cache") == "miss")
            }
        }

        @Test func healthAndReadiness() async throws {
            try await withImageServer { harness in
                let health = try await harness.get("/health")
                #expect(health.status == 200 && String(decoding: health.body, as: UTF8.self) == "ok\n")
                #expect(try await harness.get("/ready").status == 200)
                #expect(harness.server.isReady)
            }
        }

        @Test func metricsCountRequestsStagesCachesAndBytes() async throws {
            try await withImageServer { harness in
                _ = try await harness.image("photo.jpg", [("w", "30")])
                _ = try await harness.image("photo.jpg", [("w", "30")])
                _ = try await harness.image("missing.jpg")
                _ = try await harness.get("/img")
                let reply = try await harness.get("/metrics")
                #expect(reply.status == 200 && reply.header("content-type")?.hasPrefix("text/plain") == true)
                let text = String(decoding: reply.body, as: UTF8.self)
                func value(_ prefix: String) -> Double? {
                    text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ").last ?? "") }
                }
                #expect(value("webimage_server_requests_total{status=\"200\"}") == 2)
                #expect(value("webimage_server_requests_total{status=\"404\"}") == 1)
                #expect(value("webimage_server_requests_total{status=\"400\"}") == 1)
                #expect(value("webimage_server_result_cache_total{result=\"memory\"}") == 1)
                #expect(value("webimage_server_result_cache_total{result=\"miss\"}") == 2, "the bad request stops before the cache")
                #expect(value("webimage_server_stage_seconds_count{stage=\"decode\"}") == 1)
                #expect(value("webimage_server_stage_seconds_count{stage=\"fetch\"}") == 1)
                #expect(value("webimage_server_stage_seconds_count{stage=\"total\"}") == 4)
                #expect((value("webimage_server_source_bytes_total") ?? 0) > 10_000)
                #expect((value("webimage_server_response_bytes_total") ?? 0) > 0)
                #expect(value("webimage_server_queue_depth") == 0)
            }
        }
    }
}
