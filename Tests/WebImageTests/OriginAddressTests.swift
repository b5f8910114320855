import Foundation
import Testing
import WebImage
import WebImageOrigin

/// The test origin on other loopback addresses (many host names for the many-host measurements),
/// and never beyond loopback.
@Suite("Test origin on 127.0.0.0/8 addresses")
struct OriginAddressTests {
    @Test func servesOnAnotherLoopbackAddressAndRefusesOthers() async throws {
        let origin = try await ImageOrigin.start(files: SampleFiles.standard, address: "127.0.0.2")
        let out = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: out) }
        #expect(origin.baseURL.host == "127.0.0.2")
        // It counts requests: a long timeout, so a loaded machine's slow first attempt is not retried
        // (a second request failed this once, beside a fuzzer, at the default 15 s).
        let result = try await WebImageCommand.run(
            ["fetch", origin.imageURL("small.jpg").absoluteString, "--output", out.path, "--no-cache", "--timeout", "120"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(origin.requestCount(path: "/images/small.jpg") == 1)
        await origin.stop()

        for address in ["0.0.0.0", "10.0.0.1", "::1", "127.0.0", "127.0.0.1.5", "127.0.0.256", "localhost"] {
            await #expect(throws: OriginError.self, "\(address)") { _ = try await ImageOrigin.start(files: [:], address: address) }
        }
        let command = try await WebImageCommand.run(["origin", "--address", "0.0.0.0", "--seconds", "1"])
        #expect(command.status != 0 && command.stderr.contains("loopback"), "\(command.stderr)")
    }
}
