import AsyncHTTPClient
import Foundation
import Testing
import WebImage
import WebImageServer

extension ServerTests {
    /// Where `serve --use-s3` finds credentials without keys in its environment (issue 29): the AWS
    /// SDKs' chain — a profile of the shared credentials file, the ECS/EKS container role, the EC2
    /// instance role over IMDSv2 — against moto (which checks every signature, the temporary
    /// credentials' included) and the platform's services on loopback (Fixtures/s3/aws-metadata.py).
    @Suite("webimage serve: S3 credentials from the platform (process)", .serialized)
    struct ServerS3CredentialTests {
        /// The container and instance-metadata services, answering with the keys in `state`.
        final class Metadata: @unchecked Sendable {  // set once in init, then only read
            let process = TestProcess()
            let input = Pipe(), output = Pipe()
            let port: Int
            let state: URL

            init(_ keys: [String: String], expiresIn: Int, authorization: String? = nil, in folder: URL) async throws {
                state = folder.appendingPathComponent("state.json")
                try Self.write(keys, expiresIn: expiresIn, authorization: authorization, to: state)
                let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("Fixtures/s3/aws-metadata.py")
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", script.path, state.path]
                process.standardInput = input
                process.standardOutput = output
                try process.run()
                let line = String(decoding: await ServeCommandTests.ServeProcess.firstLine(of: output.fileHandleForReading), as: UTF8.self)
                guard line.hasPrefix("listening "), let port = Int(line.dropFirst(10).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    process.terminate()
                    throw ServeCommandTests.CLIFailure(description: "the metadata service did not start: \(line)")
                }
                self.port = port
            }

            static func write(_ keys: [String: String], expiresIn: Int, authorization: String?, to url: URL) throws {
                var state: [String: Any] = ["id": keys["id"] ?? "", "secret": keys["secret"] ?? "", "token": keys["token"] ?? "", "expiresIn": expiresIn]
                if let authorization { state["authorization"] = authorization }
                // Written beside, then renamed: the service never reads half a file.
                let temporary = url.appendingPathExtension("new")
                try JSONSerialization.data(withJSONObject: state).write(to: temporary)
                guard rename(temporary.path, url.path) == 0 else { throw ServeCommandTests.CLIFailure(description: "cannot write \(url.path)") }
            }

            func count(_ client: HTTPClient) async throws -> [String: Int] {
                let reply = try await ServeProcessAttackTests.get("http://127.0.0.1:\(port)/count", client: client)
                return try JSONDecoder().decode([String: Int].self, from: reply.body)
            }

            func stop() async {
                try? input.fileHandleForWriting.close()
                let process = self.process
                await offPool { process.waitUntilExit() }
            }
        }

        /// No keys in the environment, no shared file, no IMDS unless a test names one.
        static func environment(_ extra: [String: String]) -> [String: String] {
            ["WEBIMAGE_LOG_LEVEL": "error", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
             "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_EC2_METADATA_DISABLED": "true",
             "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": ""].merging(extra) { $1 }
        }

        static func flags(_ moto: ServerS3SourceTests.Moto) -> [String] {
            // No source or result memory: every request signs a fetch of its own.
            ["--use-s3", "--s3-endpoint", "http://127.0.0.1:\(moto.port)", "--fetch-timeout", "30", "--source-memory-mb", "0", "--result-memory-mb", "0"]
        }

        @Test func aContainerRolesKeysAreFetchedWithTheAgentsTokenAndRefreshedBeforeTheyExpire() async throws {
            let folder = try temporaryDirectory()
            let moto = try await ServerS3SourceTests.Moto(files: folder)
            // Five minutes and 15 seconds: inside the last five minutes (the refresh margin) 15 s from now.
            let metadata = try await Metadata(moto.roles["reader"] ?? [:], expiresIn: 315, authorization: "pod-token-1", in: folder)
            let tokenFile = folder.appendingPathComponent("token")
            try Data("pod-token-1\n".utf8).write(to: tokenFile)
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            let serve = try await ServeCommandTests.ServeProcess(Self.flags(moto), environment: Self.environment([
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:\(metadata.port)/creds/task-1",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile.path,
            ]))
            let first = try await ServerS3SourceTests.get(serve, client, "s3://photos/a.png")
            #expect(first.status == 200, "\(first.code)")
            // The platform now hands out the other role's keys; the server's are still fresh.
            try Metadata.write(moto.roles["nobody"] ?? [:], expiresIn: 3600, authorization: "pod-token-1", to: metadata.state)
            let second = try await ServerS3SourceTests.get(serve, client, "s3://photos/a.png", "&w=15")
            #expect(second.status == 200, "the cached keys are used: \(second.code)")
            let beforeRefresh = try await metadata.count(client)["container"]
            #expect(beforeRefresh == 1, "one fetch at start, whose keys the requests use")
            try await Task.sleep(for: .seconds(16))
            // Inside the margin the old keys, still valid, answer while one refresh runs behind; then
            // the new role's keys are used, and it may not read the object.
            var width = 14, refreshed = false
            for _ in 0..<40 where !refreshed {
                let reply = try await ServerS3SourceTests.get(serve, client, "s3://photos/a.png", "&w=\(width)")
                #expect(reply.status == 200 || (reply.status == 404 && reply.code == "source_not_found"), "\(reply.status) \(reply.code)")
                refreshed = reply.status == 404
                width -= width > 2 ? 1 : 0
                if !refreshed { try await Task.sleep(for: .milliseconds(250)) }
            }
            #expect(refreshed, "the refreshed keys are used")
            #expect(try await metadata.count(client)["container"] == 2, "one refresh, however many requests saw the margin")
            kill(serve.process.processIdentifier, SIGTERM)
            #expect(await serve.waitForExit().0 == 0)

            // A wrong agent token: the server says so at start and does not listen.
            try Data("pod-token-2".utf8).write(to: tokenFile)
            let refused = try await WebImageCommand.run(["serve", "--port", "0"] + Self.flags(moto), environment: Self.environment([
                "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://127.0.0.1:\(metadata.port)/creds/task-1",
                "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": tokenFile.path,
            ]))
            #expect(refused.status == 69 && refused.stderr.contains("401"), "\(refused.stderr)")
            await metadata.stop()
            await moto.stop()
            try await client.shutdown()
        }

        @Test func anInstanceRoleComesThroughIMDSv2AndAProfileFromTheSharedFile() async throws {
            let folder = try temporaryDirectory()
            let moto = try await ServerS3SourceTests.Moto(files: folder)
            let metadata = try await Metadata(moto.roles["reader"] ?? [:], expiresIn: 3600, in: folder)
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            let onEC2 = try await ServeCommandTests.ServeProcess(Self.flags(moto), environment: Self.environment([
                "AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:\(metadata.port)",
            ]))
            let found = try await ServerS3SourceTests.get(onEC2, client, "s3://photos/a.png")
            #expect(found.status == 200, "\(found.code)")
            #expect(try await metadata.count(client)["imds"] == 1, "the keys of the check at start, through a session token: IMDSv2")
            kill(onEC2.process.processIdentifier, SIGTERM)
            #expect(await onEC2.waitForExit().0 == 0)

            // A profile of the shared credentials file, chosen by AWS_PROFILE.
            let file = folder.appendingPathComponent("credentials")
            let reader = moto.users["reader"] ?? [:]
            try Data("""
                [default]
                aws_access_key_id = \(moto.users["nobody"]?["id"] ?? "")
                aws_secret_access_key = \(moto.users["nobody"]?["secret"] ?? "")

                [images]
                aws_access_key_id=\(reader["id"] ?? "")
                aws_secret_access_key=\(reader["secret"] ?? "")
                """.utf8).write(to: file)
            let withProfile = try await ServeCommandTests.ServeProcess(Self.flags(moto), environment: Self.environment([
                "AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "images",
            ]))
            #expect(try await ServerS3SourceTests.get(withProfile, client, "s3://photos/a.png").status == 200)
            kill(withProfile.process.processIdentifier, SIGTERM)
            #expect(await withProfile.waitForExit().0 == 0)

            // Nothing to be found, a metadata service that does not answer, a profile that is not there,
            // a container address that is neither loopback nor the agent's.
            let cases: [([String: String], Int32, String)] = [
                ([:], 64, "found no AWS credentials"),
                (["AWS_EC2_METADATA_DISABLED": "", "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://127.0.0.1:9"], 69, "no S3 credentials"),
                (["AWS_SHARED_CREDENTIALS_FILE": file.path, "AWS_PROFILE": "absent"], 64, "AWS_PROFILE=absent"),
                (["AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://10.0.0.1/creds"], 64, "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
            ]
            for (extra, status, message) in cases {
                let result = try await WebImageCommand.run(["serve", "--port", "0"] + Self.flags(moto), environment: Self.environment(extra))
                #expect(result.status == status && result.stderr.contains(message), "\(extra): \(result.status) \(result.stderr)")
            }
            await metadata.stop()
            await moto.stop()
            try await client.shutdown()
        }
    }
}
