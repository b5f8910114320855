import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
    @Suite("webimage fetch: robots.txt checks too costly to match")
    struct FetchRobotsCostTests {
        /// A hostile host's robots.txt of 4,000 wildcard rules against URLs of 8 KB: each check once
        /// cost rules × path bytes (32 M steps, a quarter of a second of CPU per URL in a release
        /// build, serialised across every host). A check past `RobotsRules.maxMatchCost` is answered
        /// disallowed without matching; short paths on that host are still matched and allowed.
        @Test func aCheckTooCostlyToMatchIsDisallowedAtOnce() async throws {
            try await withOrigin { origin in
                origin.setRobots(.file("User-agent: *\n" + (0..<4000).map { "Disallow: /*zz\($0)zz\n" }.joined()))
                let long = (0..<200).map { origin.imageURL("small.jpg", query: "n=\($0)&p=" + String(repeating: "a", count: 8000)) }
                let started = ContinuousClock.now
                let (result, rows) = try await FetchRobotsTests.fetch([origin.imageURL("small.jpg")] + long, ["--timeout", "120"])
                let elapsed = ContinuousClock.now - started
                #expect(result.status == 0, "\(result.stderr)")
                #expect(rows.first?.status == "ok", "\(rows.first.map { "\($0)" } ?? "")")
                #expect(rows.dropFirst().allSatisfy { $0.status == "robots-disallowed" } && rows.count == 201)
                #expect(origin.requestCount(path: "/images/small.jpg") == 1)
                #expect(elapsed < TestTime.scaled(.seconds(30)), "took \(elapsed)")
            }
        }
    }
}
