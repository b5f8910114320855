import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin

/// Colour management through the real entry points — `webimage info`, `fetch` and `serve`
/// processes against a local origin — compared with Pillow's ImageCms references
/// (`scripts/fixtures/make-color-fixtures.py`).
extension ServerTests {
    @Suite("Colour management: info, fetch and serve processes")
    struct ColorEntryPointTests {
        static let files: [String: Data] = {
            var files: [String: Data] = [:]
            for name in ["prophoto.png", "adobe-rgb.jpg", "swapped-red-green.webp"] {
                files[name] = try? ColorManagementTests.load(name)
            }
            files["exif.jpg"] = withSecretEXIF(files["adobe-rgb.jpg"]!)
            return files
        }()

        /// `jpeg` with an `APP1 Exif` segment right after `SOI`: a minimal big-endian TIFF whose
        /// one tag is an ASCII string a result must never carry (standing in for GPS data).
        static func withSecretEXIF(_ jpeg: Data) -> Data {
            let secret = Array("GPS-SECRET-48.8584N".utf8) + [0]
            var tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1]                 // header, IFD at 8, one entry
            tiff += [0x01, 0x0E, 0, 2] + [0, 0, 0, UInt8(secret.count)] + [0, 0, 0, 26]  // ImageDescription → offset 26
            tiff += [0, 0, 0, 0] + secret                                                  // no next IFD, the string
            let body = Array("Exif".utf8) + [0, 0] + tiff
            let length = body.count + 2
            return jpeg.prefix(2) + Data([0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + body) + jpeg.dropFirst(2)
        }

        /// The reference shrunk by WebImage's own resampler: the colours under test stay Pillow's.
        static func reference(_ name: String, width: Int? = nil) throws -> Image {
            let full = try ImageCoderRegistry.default.decode(try ColorManagementTests.load("\(name).pillow.png"))
            guard let width else { return full }
            return try full.processed(by: [ImageProcessors.Resize(width: width, height: 10_000)])
        }

        @Test func infoNamesTheProfile() async throws {
            let path = ColorManagementTests.directory.appendingPathComponent("prophoto.png").path
            let text = try await WebImageCommand.run(["info", path])
            #expect(text.status == 0 && text.stdout.contains("ICC profile \"ProPhoto RGB\" (rgb)"), "\(text.stdout)")
            let json = try await WebImageCommand.run(["info", path, "--json"])
            #expect(json.stdout.contains("\"colorProfile\":\"ProPhoto RGB\"") && json.stdout.contains("\"sRGB\":false"), "\(json.stdout)")
        }

        @Test func fetchConvertsReencodedOutput() async throws {
            try await withOrigin(files: Self.files) { origin in
                let directory = temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                for (name, resize) in [("prophoto.png", nil), ("adobe-rgb.jpg", "32x32"), ("swapped-red-green.webp", nil)] as [(String, String?)] {
                    let output = directory.appendingPathComponent(name)
                    var arguments = ["fetch", origin.imageURL(name).absoluteString, "--output", output.path, "--no-cache", "--format", "png"]
                    if let resize { arguments += ["--resize", resize] }
                    let run = try await WebImageCommand.run(arguments)
                    #expect(run.status == 0, "\(run.stderr)")
                    let file = try #require(try FileManager.default.contentsOfDirectory(at: output, includingPropertiesForKeys: nil).first { $0.pathExtension == "png" })
                    let written = try ImageCoderRegistry.default.decode(try Data(contentsOf: file))
                    #expect(written.sourceColorProfile == nil, "sRGB output is untagged")
                    let error = ColorManagementTests.meanError(written, try Self.reference(name, width: resize == nil ? nil : 32))
                    #expect(error <= 2, "\(name): mean error \(error)")
                }
                // --color keep: the pixels as stored, the profile in the file.
                let kept = directory.appendingPathComponent("kept")
                let run = try await WebImageCommand.run(
                    ["fetch", origin.imageURL("prophoto.png").absoluteString, "--output", kept.path, "--no-cache", "--format", "png", "--color", "keep"])
                #expect(run.status == 0, "\(run.stderr)")
                let file = try #require(try FileManager.default.contentsOfDirectory(at: kept, includingPropertiesForKeys: nil).first { $0.pathExtension == "png" })
                #expect(try ImageCoderRegistry.default.decode(try Data(contentsOf: file)).sourceColorProfile?.description == "ProPhoto RGB")
            }
        }

        @Test func serveConvertsAndStripsByDefaultAndKeepsOnRequest() async throws {
            try await withOrigin(files: Self.files) { origin in
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                func get(_ serve: ServeCommandTests.ServeProcess, _ name: String, _ query: String) async throws -> Data {
                    let url = "http://127.0.0.1:\(serve.port)/img?url=\(ServerHarness.encode(origin.imageURL(name).absoluteString))&\(query)"
                    let result = try await ServeProcessAttackTests.get(url, client: client)
                    #expect(result.status == 200, "\(name) \(query): \(String(decoding: result.body.prefix(200), as: UTF8.self))")
                    return result.body
                }
                for (name, query, width) in [("prophoto.png", "format=png", nil), ("adobe-rgb.jpg", "w=32&format=png", 32), ("swapped-red-green.webp", "format=png", nil)] as [(String, String, Int?)] {
                    let result = try ImageCoderRegistry.default.decode(try await get(serve, name, query))
                    #expect(result.sourceColorProfile == nil)
                    let error = ColorManagementTests.meanError(result, try Self.reference(name, width: width))
                    #expect(error <= 2, "\(name) \(query): mean error \(error)")
                }
                // Nothing of the source's metadata reaches a result, in any output format.
                for format in ["jpeg", "png", "webp", "avif"] {
                    let body = try await get(serve, "exif.jpg", "w=40&format=\(format)")
                    for leak in ["GPS-SECRET", "Exif", "ICC_PROFILE"] {
                        #expect(body.range(of: Data(leak.utf8)) == nil, "\(format) result carries \(leak)")
                    }
                }
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)

                let keeping = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60", "--color", "keep"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                let kept = try ImageCoderRegistry.default.decode(try await get(keeping, "prophoto.png", "format=png"))
                #expect(kept.sourceColorProfile?.description == "ProPhoto RGB")
                #expect(ColorManagementTests.meanError(kept, try Self.reference("prophoto.png")) <= 2, "the viewer converts: same colours")
                kill(keeping.process.processIdentifier, SIGTERM)
                #expect(await keeping.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
