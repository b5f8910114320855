import Foundation
import Testing
import WebImage
import WebImageOrigin

extension HeavyTests {
/// `webimage report merge` reads `--jsonl` files that anyone may have written (shards from other
/// machines): numbers no run produces, and `file` values that lead out of the run's folder or to
/// a FIFO, are dropped, never a trap, a read outside the folder or a hang.
@Suite("webimage report merge: hostile records")
struct ReportMergeHostileTests {
    @Test func recordsNoRunWritesAreDroppedNotTrappedOnOrFollowed() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = dir.appendingPathComponent("run"), secret = dir.appendingPathComponent("secret")
        for folder in [run, secret] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let png = try ImageCoderRegistry.default.encode(SampleImages.pattern(width: 40, height: 30, seed: 9), as: .png)
        try png.write(to: run.appendingPathComponent("a.png"))
        try png.write(to: secret.appendingPathComponent("private.png"))
        #expect(mkfifo(run.appendingPathComponent("fifo.png").path, 0o600) == 0)
        let records = [
            #"{"line":1,"url":"http://a/1","status":"ok","bytes":9223372036854775807,"file":"a.png","at":1}"#,
            #"{"line":2,"url":"http://a/2","status":"ok","bytes":1,"at":1e300}"#,
            #"{"line":3,"url":"http://a/3","status":"ok","at":-1e300,"file":"../secret/private.png"}"#,
            #"{"line":4,"url":"http://a/4","status":"ok","file":"\#(secret.path)/private.png","ms":1e308}"#,
            #"{"line":5,"url":"http://a/5","status":"ok","file":"fifo.png","width":-5,"height":9223372036854775807}"#,
            #"{"line":6,"url":"http://a/6","status":"ok","bytes":-7,"at":2}"#,
        ]
        let jsonl = run.appendingPathComponent("run.jsonl")
        try (records.joined(separator: "\n") + "\n").write(to: jsonl, atomically: true, encoding: .utf8)
        let report = dir.appendingPathComponent("report.html")
        let result = try await WebImageCommand.run(["report", "merge", jsonl.path, "--report", report.path, "--json"], timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        struct Summary: Decodable { var requested: Int; var succeeded: Int; var bytes: Int; var seconds: Double }
        let line = try #require(result.stdout.split(separator: "\n").last { $0.hasPrefix("{") })
        let summary = try JSONDecoder().decode(Summary.self, from: Data(line.utf8))
        // Only the plausible byte count (1) is summed; the longest plausible run is 2 s.
        #expect(summary.requested == 6 && summary.succeeded == 6 && summary.bytes == 1 && summary.seconds == 2, "\(line)")
        // One thumbnail: a.png's. Not the file outside the folder, not the FIFO.
        let html = try String(contentsOf: report, encoding: .utf8)
        #expect(html.components(separatedBy: "<img src=\"data:image/webp").count - 1 == 1)
    }
}
}
