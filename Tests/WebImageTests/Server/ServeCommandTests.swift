import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// `webimage serve` as a real process: flags and environment, signatures off warning, the
    /// access log, and graceful shutdown on SIGTERM.
    @Suite("webimage serve (process)")
    struct ServeCommandTests {
        /// A running `webimage serve`; its first stdout line gives the port.
        final class ServeProcess: @unchecked Sendable {  // `process` and the pipes are set once in init, then only read.
            let process = TestProcess()
            let stdout = Pipe(), stderr = Pipe()
            let port: Int
            /// Drains stderr while the server runs (a full pipe, e.g. of sanitizer reports, would
            /// block the server), for ``waitForExit()``.
            private let errors: PipeReader

            /// `openFiles`: run under `prlimit` with that many file descriptors (soft and hard).
            init(_ arguments: [String], environment: [String: String] = [:], openFiles: Int? = nil) async throws {
                errors = PipeReader(stderr)
                process.executableURL = WebImageCommand.executable
                process.arguments = ["serve", "--port", "0"] + arguments
                if let openFiles {  // prlimit execs the command: the process id stays the server's
                    process.arguments = ["--nofile=\(openFiles):\(openFiles)", "--", WebImageCommand.executable.path] + process.arguments!
                    process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
                }
                process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
                process.standardOutput = stdout
                process.standardError = stderr
                try process.run()
                errors.start()
                let line = String(decoding: await Self.firstLine(of: stdout.fileHandleForReading), as: UTF8.self)
                guard let portText = line.split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines), let port = Int(portText) else {
                    process.terminate()
                    throw CLIFailure(description: "no banner: \(line)")
                }
                self.port = port
            }

            /// What `handle` gives up to its first newline (or its end). Blocking reads run on
            /// threads of their own: blocking one of the two cooperative threads would starve
            /// every other test.
            static func firstLine(of handle: FileHandle) async -> Data {
                await offPool {
                    var bytes = Data()
                    while !bytes.contains(0x0A) {
                        let chunk = handle.availableData
                        if chunk.isEmpty { break }
                        bytes.append(chunk)
                    }
                    return bytes
                }
            }

            /// The exit status and everything the server wrote on stderr; records an issue when
            /// that holds Thread Sanitizer output (``ChildSanitizerReports``).
            func waitForExit() async -> (Int32, String) {
                let process = self.process, errors = self.errors
                let (status, log) = await offPool {
                    let log = String(decoding: errors.data(), as: UTF8.self)
                    process.waitUntilExit()
                    return (process.terminationStatus, log)
                }
                ChildSanitizerReports.check(log, pid: process.processIdentifier, of: [process.executableURL?.lastPathComponent ?? ""] + (process.arguments ?? []))
                return (status, log)
            }
        }

        struct CLIFailure: Error, CustomStringConvertible { var description: String }

        static func get(_ url: String, client: HTTPClient) async throws -> (Int, Data) {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 10 << 20)))
        }

        @Test func sigtermFinishesTheRequestInFlightAndExitsZero() async throws {
            try await withOrigin { origin in
                let serve = try await ServeProcess(
                    ["--allow-private-networks", "--fetch-timeout", "60"], environment: ["WEBIMAGE_LOG_LEVEL": "info"])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let source = ServerHarness.encode(origin.imageURL("photo.jpg", query: "delay=1500").absoluteString)
                let inFlight = Task { try await Self.get("http://127.0.0.1:\(serve.port)/img?url=\(source)&w=50", client: client) }
                #expect(await eventually(timeout: .seconds(20)) { origin.requestCount(path: "/images/photo.jpg") == 1 })
                kill(serve.process.processIdentifier, SIGTERM)
                let (status, body) = try await inFlight.value
                #expect(status == 200)
                #expect(try ImageCoderRegistry.default.decode(body).pixelWidth == 50)
                let (exitCode, log) = await serve.waitForExit()
                #expect(exitCode == 0, "\(log)")
                #expect(log.contains("no signing key configured"), "the warning is logged at start")
                #expect(log.contains("GET /img?url=") && log.contains("status=200"), "one access-log line per request: \(log)")
                try await client.shutdown()
            }
        }

        @Test func sourceCAFileTrustsAPrivateCertificateForHTTPSSources() async throws {
            let certificate = try ServerSSRFTests.tlsFixture("cert.pem")  // self-signed, for 127.0.0.1
            let origin = try await ImageOrigin.start(files: SampleFiles.standard, tls: (certificate, try ServerSSRFTests.tlsFixture("key.pem")))
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            let source = ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString)
            let file = temporaryDirectory().appendingPathComponent("private-ca.pem")
            try certificate.write(to: file)
            for (trusted, expected) in [(false, 502), (true, 200)] {
                var environment = ["WEBIMAGE_ALLOW_PRIVATE_NETWORKS": "1", "WEBIMAGE_LOG_LEVEL": "error"]
                if trusted { environment["WEBIMAGE_SOURCE_CA_FILE"] = file.path }
                let serve = try await ServeProcess([], environment: environment)
                let reply = try await Self.get("http://127.0.0.1:\(serve.port)/img?url=\(source)&w=20", client: client)
                #expect(reply.0 == expected, "trusted: \(trusted)")
                kill(serve.process.processIdentifier, SIGTERM)
                #expect(await serve.waitForExit().0 == 0)
            }
            try await client.shutdown()
            await origin.stop()
            // A file that cannot be read, or holds no certificate, is a usage error at start.
            let missing = try await WebImageCommand.run(["serve", "--port", "0", "--source-ca-file", "/nonexistent/ca.pem"])
            #expect(missing.status == 64 && missing.stderr.contains("cannot read the certificate file"))
            let notPEM = temporaryDirectory().appendingPathComponent("photo.pem")
            try SampleFiles.standard["photo.jpg"]!.write(to: notPEM)
            let invalid = try await WebImageCommand.run(["serve", "--port", "0", "--source-ca-file", notPEM.path])
            #expect(invalid.status == 64 && invalid.stderr.contains("holds no valid PEM certificate"), "\(invalid.status) \(invalid.stderr)")
        }

        @Test func environmentVariablesConfigureTheServer() async throws {
            try await withOrigin { origin in
                let serve = try await ServeProcess([], environment: [
                    "WEBIMAGE_KEY": "k1,k2", "WEBIMAGE_ALLOW_PRIVATE_NETWORKS": "1", "WEBIMAGE_MAX_OUTPUT_SIDE": "100",
                    "WEBIMAGE_LOG_LEVEL": "warning", "WEBIMAGE_FETCH_TIMEOUT": "60",
                ])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let source = ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString)
                let base = "http://127.0.0.1:\(serve.port)"
                let unsigned = try await Self.get("\(base)/img?url=\(source)&w=50", client: client)
                #expect(unsigned.0 == 403)
                let signed = try await WebImageCommand.run(["sign", origin.imageURL("photo.jpg").absoluteString, "--width", "50"], environment: ["WEBIMAGE_KEY": "k2"])
                #expect(try await Self.get(base + signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines), client: client).0 == 200)
                let tooWide = try await WebImageCommand.run(["sign", origin.imageURL("photo.jpg").absoluteString, "--width", "150"], environment: ["WEBIMAGE_KEY": "k1"])
                #expect(try await Self.get(base + tooWide.stdout.trimmingCharacters(in: .whitespacesAndNewlines), client: client).0 == 400)
                kill(serve.process.processIdentifier, SIGTERM)
                let (exitCode, log) = await serve.waitForExit()
                #expect(exitCode == 0)
                #expect(!log.contains("no signing key configured"))
                try await client.shutdown()
            }
        }
    }
}
