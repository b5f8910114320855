import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `s3://BUCKET/KEY` sources (issue 29) through a real `webimage serve --use-s3` and a real
    /// S3-compatible server on loopback: moto in server mode, which checks every request's
    /// Signature V4 against the IAM user's secret (Fixtures/s3/moto-s3.py; `scripts/setup`
    /// installs moto). The endpoint is on 127.0.0.1 and the servers run without
    /// `--allow-private-networks`: the operator's endpoint is exempt, a source URL naming the
    /// same address is not.
    @Suite("webimage serve: s3:// sources (process)")
    struct ServerS3SourceTests {
        /// moto on a free port of 127.0.0.1, with bucket `photos`: `a.png` (64×48) and `big.png`
        /// (300 000 bytes); users `reader` (may GetObject) and `nobody` (may not).
        final class Moto: @unchecked Sendable {  // set once in init, then only read
            let process = TestProcess()
            let input = Pipe(), output = Pipe()
            let port: Int
            let users: [String: [String: String]]
            /// Temporary credentials (`id`, `secret`, `token`) of `reader-role` and `nobody-role`.
            let roles: [String: [String: String]]

            init(files: URL) async throws {
                try SampleImages.png(width: 64, height: 48, seed: 7).write(to: files.appendingPathComponent("a.png"))
                try Data(repeating: 0x42, count: 300_000).write(to: files.appendingPathComponent("big.png"))
                let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("Fixtures/s3/moto-s3.py")
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", script.path, "photos"] + ["a.png", "big.png"].map { "\($0)=\(files.appendingPathComponent($0).path)" }
                process.standardInput = input
                process.standardOutput = output
                // moto logs every request on stderr: nobody reads it.
                guard let devNull = FileHandle(forWritingAtPath: "/dev/null") else { throw ServeCommandTests.CLIFailure(description: "no /dev/null") }
                process.standardError = devNull
                try process.run()
                let line = await ServeCommandTests.ServeProcess.firstLine(of: output.fileHandleForReading)
                guard let ready = try? JSONSerialization.jsonObject(with: line) as? [String: Any], let port = ready["port"] as? Int,
                      let users = ready["users"] as? [String: [String: String]], let roles = ready["roles"] as? [String: [String: String]]
                else {
                    process.terminate()
                    throw ServeCommandTests.CLIFailure(description: "moto did not start (is moto[server] installed? scripts/setup): \(String(decoding: line, as: UTF8.self))")
                }
                self.port = port
                self.users = users
                self.roles = roles
            }

            /// Closes moto's input: it stops.
            func stop() async {
                try? input.fileHandleForWriting.close()
                let process = self.process
                await offPool { process.waitUntilExit() }
            }

            func environment(_ user: String, secret: String? = nil) -> [String: String] {
                [
                    "WEBIMAGE_LOG_LEVEL": "error", "AWS_ACCESS_KEY_ID": users[user]?["id"] ?? "",
                    "AWS_SECRET_ACCESS_KEY": secret ?? users[user]?["secret"] ?? "", "AWS_REGION": "us-east-1",
                ]
            }
        }

        static func get(_ serve: ServeCommandTests.ServeProcess, _ client: HTTPClient, _ source: String, _ query: String = "&w=16") async throws
            -> (status: Int, code: String, body: Data)
        {
            let reply = try await ServeProcessAttackTests.get("http://127.0.0.1:\(serve.port)/img?url=\(ServerHarness.encode(source))\(query)", client: client)
            return (reply.status, reply.status == 200 ? "" : ServerLocalSourceTests.code(reply.body), reply.body)
        }

        @Test func signedObjectsMissingObjectsLargeObjectsAndRefusedCredentials() async throws {
            let moto = try await Moto(files: temporaryDirectory())
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            let endpoint = "http://127.0.0.1:\(moto.port)"
            let common = ["--s3-endpoint", endpoint, "--max-source-bytes", "100000", "--fetch-timeout", "30"]

            let reader = try await ServeCommandTests.ServeProcess(["--use-s3"] + common, environment: moto.environment("reader"))
            let found = try await Self.get(reader, client, "s3://photos/a.png")
            #expect(found.status == 200, "\(found.code)")
            #expect(try ImageCoderRegistry.default.decode(found.body).pixelWidth == 16)
            let missing = try await Self.get(reader, client, "s3://photos/missing.png")
            #expect(missing.status == 404 && missing.code == "source_not_found")
            let big = try await Self.get(reader, client, "s3://photos/big.png")
            #expect(big.status == 413 && big.code == "source_too_large")
            #expect(try await Self.get(reader, client, "s3://photos/a/../a.png").status == 403, "no dot segments")
            #expect(try await Self.get(reader, client, "s3://photos/").status == 400, "no key")
            // The endpoint's address is exempt for s3:// only: named as a source, it is refused.
            let direct = try await Self.get(reader, client, "\(endpoint)/photos/a.png")
            #expect(direct.status == 403 && direct.code == "address_refused")
            kill(reader.process.processIdentifier, SIGTERM)
            #expect(await reader.waitForExit().0 == 0)

            // A wrong secret: S3's SignatureDoesNotMatch is the server's misconfiguration, 502.
            var wrong = moto.environment("reader", secret: "wrong" + (moto.users["reader"]?["secret"] ?? ""))
            wrong["WEBIMAGE_USE_S3"] = "1"
            let forged = try await ServeCommandTests.ServeProcess(common, environment: wrong)
            let refused = try await Self.get(forged, client, "s3://photos/a.png")
            #expect(refused.status == 502 && refused.code == "source_error")
            kill(forged.process.processIdentifier, SIGTERM)
            #expect(await forged.waitForExit().0 == 0)

            // Valid credentials that may not read the object: S3's AccessDenied is a 404.
            let nobody = try await ServeCommandTests.ServeProcess(["--use-s3"] + common, environment: moto.environment("nobody"))
            let denied = try await Self.get(nobody, client, "s3://photos/a.png")
            #expect(denied.status == 404 && denied.code == "source_not_found")
            kill(nobody.process.processIdentifier, SIGTERM)
            #expect(await nobody.waitForExit().0 == 0)

            // Without --use-s3, s3:// is refused before anything is sent.
            let off = try await ServeCommandTests.ServeProcess(["--fetch-timeout", "30"], environment: moto.environment("reader"))
            let offReply = try await Self.get(off, client, "s3://photos/a.png")
            #expect(offReply.status == 403 && offReply.code == "source_not_allowed")
            kill(off.process.processIdentifier, SIGTERM)
            #expect(await off.waitForExit().0 == 0)
            await moto.stop()
            try await client.shutdown()
        }

        /// AWS's published Signature V4 test vector "get-vanilla" (service `service`, us-east-1,
        /// 2015-08-30T12:36:00Z, key AKIDEXAMPLE).
        @Test func signatureV4MatchesAWSsGetVanillaVector() {
            let signer = SignatureV4(
                accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "service")
            let headers = [("Host", "example.amazonaws.com"), ("X-Amz-Date", "20150830T123600Z")]
            #expect(SignatureV4.amzDate(Date(timeIntervalSince1970: 1_440_938_160)) == "20150830T123600Z")
            #expect(signer.canonicalRequest(method: "GET", path: "/", query: "", headers: headers, payloadHash: SignatureV4.emptyPayloadHash)
                == "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\nhost;x-amz-date\n" + SignatureV4.emptyPayloadHash)
            #expect(signer.authorization(method: "GET", path: "/", query: "", headers: headers, payloadHash: SignatureV4.emptyPayloadHash, amzDate: "20150830T123600Z")
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, "
                + "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        }
    }
}
