import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// An error message quotes at most ``ImageServerError/maxMessageLength`` characters of what a
    /// stranger sent (red team, stop 53: a `process=` of 7,000 commas came back whole, 14 KB, in a
    /// `400` that caches keep for `--error-max-age`).
    @Suite("Image server: error messages are bounded")
    struct ServerErrorMessageTests {
        @Test func aHugeBadParameterIsNotEchoedWhole() async throws {
            try await withOrigin(files: ["dot.png": RawPNG(width: 1, height: 1, colorType: 2) { _, _ in [1, 2, 3] }.encode()]) { origin in
                let serve = try await ServeCommandTests.ServeProcess(["--allow-private-networks"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let source = ServerHarness.encode(origin.imageURL("dot.png").absoluteString)
                let spec = "crop:0" + String(repeating: ",0", count: 7_000)
                let (status, body) = try await ServeCommandTests.get(
                    "http://127.0.0.1:\(serve.port)/img?url=\(source)&process=\(spec)", client: .shared)
                #expect(status == 400)
                let json = try JSONDecoder().decode([String: String].self, from: body)
                let message = try #require(json["message"])
                #expect(message.count <= ImageServerError.maxMessageLength + 1 && message.hasSuffix("…"), "\(message.count) characters")
                #expect(json["error"] == "bad_parameter")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
        }
    }
}
