import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// `local:///PATH` sources (issue 29) through a real `webimage serve --local-root`: a file
    /// under the root, every way out of it (`..`, encoded `%2e%2e` and `%2F`, a symbolic link to
    /// a file or a directory outside), what is not a regular file (a directory, a FIFO that would
    /// block a plain `open`), a file over the body limit, a NUL, the allow-list by scheme and
    /// path, and that a local and an http source of the same path are never one cache entry.
    @Suite("webimage serve: local:// sources (process)")
    struct ServerLocalSourceTests {
        /// ROOT/public/a.png (64×48), ROOT/images/logo.png (32×24), ROOT/big.png (over the
        /// limit), ROOT/dir/, ROOT/pipe.png (a FIFO), ROOT/link.png → OUTSIDE/secret.png,
        /// ROOT/linkdir → OUTSIDE; OUTSIDE/secret.png (40×40) is never to be served.
        static func makeTree() throws -> (root: URL, outside: URL) {
            let base = temporaryDirectory()
            let root = base.appendingPathComponent("root"), outside = base.appendingPathComponent("outside")
            let files = FileManager.default
            for dir in ["public", "images", "dir"] { try files.createDirectory(at: root.appendingPathComponent(dir), withIntermediateDirectories: true) }
            try files.createDirectory(at: outside, withIntermediateDirectories: true)
            try SampleImages.png(width: 64, height: 48, seed: 1).write(to: root.appendingPathComponent("public/a.png"))
            try SampleImages.png(width: 32, height: 24, seed: 2).write(to: root.appendingPathComponent("images/logo.png"))
            try Data(repeating: 0x42, count: 300_000).write(to: root.appendingPathComponent("big.png"))
            try SampleImages.png(width: 40, height: 40, seed: 3).write(to: outside.appendingPathComponent("secret.png"))
            try files.createSymbolicLink(at: root.appendingPathComponent("link.png"), withDestinationURL: outside.appendingPathComponent("secret.png"))
            try files.createSymbolicLink(at: root.appendingPathComponent("linkdir"), withDestinationURL: outside)
            #expect(mkfifo(root.appendingPathComponent("pipe.png").path, 0o644) == 0)
            return (root, outside)
        }

        static func code(_ body: Data) -> String {
            ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["error"] as? String ?? String(decoding: body, as: UTF8.self)
        }

        /// The canonical forms the allow-list, the keys and the loaders share, and `local`/`s3`
        /// allow-list entries.
        @Test func canonicalFormsAndAllowListEntries() throws {
            func source(_ text: String) throws -> SourceURL { try SourceURL(try #require(URL(string: text))) }
            #expect(try source("local:///photos/%2Fa%20b.jpg").url.absoluteString == "local:///photos/a%20b.jpg")
            #expect(try source("LOCAL:///%61/").url.absoluteString == "local:///a/")
            let object = try source("s3://My-Bucket/photos//a%2Bb.jpg")
            #expect(object.host == "my-bucket" && object.path == "/photos//a%2Bb.jpg" && object.port == 0)
            #expect(throws: SourceURL.Problem.dotSegment) { try source("local:///a/%2E%2e/b.jpg") }
            #expect(throws: SourceURL.Problem.dotSegment) { try source("s3://bucket/a/./b.jpg") }
            #expect(throws: SourceURL.Problem.badPath) { try source("local:///a%00b.jpg") }
            for text in ["local://host/a.jpg", "s3://ab/a.jpg", "s3://192.168.1.1/a.jpg", "s3://bad_bucket/a.jpg", "s3://a..b/a.jpg"] {
                #expect(throws: SourceURL.Problem.badHost, "\(text)") { try source(text) }
            }
            #expect(throws: SourceURL.Problem.badPort) { try source("s3://bucket:9000/a.jpg") }
            #expect(throws: SourceURL.Problem.userInfo) { try source("s3://user@bucket/a.jpg") }

            let list = try SourceAllowList(["local:///public/", "s3://photos/public/"])
            #expect(list.allows(try source("local:///public/a.jpg")))
            #expect(list.allows(try source("local:///public//x/a.jpg")))
            #expect(!list.allows(try source("local:///publicity/a.jpg")))
            #expect(!list.allows(try source("local:///a.jpg")))
            #expect(list.allows(try source("s3://photos/public/a.jpg")))
            #expect(!list.allows(try source("s3://photos2/public/a.jpg")))
            #expect(!list.allows(try source("https://photos/public/a.jpg")), "a scheme on no entry")
            #expect(throws: SourceAllowList.InvalidEntry.self) { try SourceAllowList(["s3://*.photos/"]) }
            #expect(throws: SourceAllowList.InvalidEntry.self) { try SourceAllowList(["local://host/"]) }
        }

        @Test func filesUnderTheRootAndNothingElse() async throws {
            let (root, _) = try Self.makeTree()
            let serve = try await ServeCommandTests.ServeProcess(
                ["--max-source-bytes", "100000", "--fetch-timeout", "30"], environment: ["WEBIMAGE_LOG_LEVEL": "error", "WEBIMAGE_LOCAL_ROOT": root.path])
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            func get(_ source: String, _ query: String = "") async throws -> (status: Int, code: String, body: Data) {
                let reply = try await ServeProcessAttackTests.get(
                    "http://127.0.0.1:\(serve.port)/img?url=\(ServerHarness.encode(source))\(query)", client: client)
                return (reply.status, reply.status == 200 ? "" : Self.code(reply.body), reply.body)
            }
            let found = try await get("local:///public/a.png", "&w=16")
            #expect(found.status == 200)
            #expect(try ImageCoderRegistry.default.decode(found.body).pixelWidth == 16)
            // Spelled otherwise, the same canonical file: doubled slashes, an encoded letter.
            #expect(try await get("local:////public//%61.png", "&w=16").status == 200)
            let refused: [(String, Int, String)] = [
                ("local:///public/../../outside/secret.png", 403, "source_not_allowed"),
                ("local:///public/%2e%2e/%2E%2E/outside/secret.png", 403, "source_not_allowed"),
                ("local:///public%2F..%2F..%2Foutside%2Fsecret.png", 403, "source_not_allowed"),
                ("local:///link.png", 403, "source_not_allowed"),
                ("local:///linkdir/secret.png", 403, "source_not_allowed"),
                ("local:///dir", 403, "source_not_allowed"),
                ("local:///dir/", 403, "source_not_allowed"),
                ("local:///pipe.png", 403, "source_not_allowed"),
                ("local:///big.png", 413, "source_too_large"),
                ("local:///missing.png", 404, "source_not_found"),
                ("local:///public/a.png/x.png", 404, "source_not_found"),
                ("local:///public/a.png%00.jpg", 400, "invalid_url"),
                ("local://localhost/public/a.png", 400, "invalid_url"),
                ("local:///public/a.png?x=1", 400, "invalid_url"),
            ]
            for (source, status, code) in refused {
                let reply = try await get(source, "&w=16")
                #expect(reply.status == status, "\(source)")
                #expect(reply.code == code, "\(source)")
                #expect(!String(decoding: reply.body, as: UTF8.self).contains(root.path), "no path of the server in the answer")
            }
            // /info reads local sources the same way.
            let info = try await ServeProcessAttackTests.get(
                "http://127.0.0.1:\(serve.port)/info?url=\(ServerHarness.encode("local:///public/a.png"))", client: client)
            #expect(info.status == 200 && String(decoding: info.body, as: UTF8.self).contains("\"width\":64"))
            kill(serve.process.processIdentifier, SIGTERM)
            #expect(await serve.waitForExit().0 == 0)
            try await client.shutdown()
        }

        @Test func withoutALocalRootLocalSourcesAreRefused() async throws {
            let (root, _) = try Self.makeTree()
            let serve = try await ServeCommandTests.ServeProcess(["--fetch-timeout", "30"], environment: ["WEBIMAGE_LOG_LEVEL": "error"])
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            for source in ["local:///public/a.png", "local://\(root.path)/public/a.png", "file://\(root.path)/public/a.png"] {
                let reply = try await ServeProcessAttackTests.get("http://127.0.0.1:\(serve.port)/img?w=16&url=\(ServerHarness.encode(source))", client: client)
                #expect([400, 403].contains(reply.status), "\(source)")
            }
            let plain = try await ServeProcessAttackTests.get(
                "http://127.0.0.1:\(serve.port)/img?w=16&url=\(ServerHarness.encode("local:///public/a.png"))", client: client)
            #expect(plain.status == 403 && Self.code(plain.body) == "source_not_allowed")
            kill(serve.process.processIdentifier, SIGTERM)
            #expect(await serve.waitForExit().0 == 0)
            try await client.shutdown()
        }

        /// `--allow-source local:///public/` allows that directory only; an http source, whose
        /// scheme is on no entry, is refused; and `local:///images/logo.png` (32×24) and the
        /// origin's `/images/logo.png` (256×256) are two sources in the caches, whichever comes first.
        @Test func theAllowListCoversSchemesAndCacheKeysKeepThemApart() async throws {
            let (root, _) = try Self.makeTree()
            try await withOrigin { origin in
                let http = "http://127.0.0.1:\(origin.port)/images/logo.png"
                func get(_ serve: ServeCommandTests.ServeProcess, _ client: HTTPClient, _ source: String) async throws -> (status: Int, body: Data) {
                    let reply = try await ServeProcessAttackTests.get("http://127.0.0.1:\(serve.port)/img?url=\(ServerHarness.encode(source))", client: client)
                    return (reply.status, reply.body)
                }
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }

                let listed = try await ServeCommandTests.ServeProcess(
                    ["--local-root", root.path, "--allow-private-networks", "--allow-source", "local:///public/", "--fetch-timeout", "30"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                #expect(try await get(listed, client, "local:///public/a.png").status == 200)
                #expect(try await get(listed, client, "local:///images/logo.png").status == 403)
                #expect(try await get(listed, client, http).status == 403, "a scheme on no entry is refused")
                #expect(origin.requests.isEmpty)
                kill(listed.process.processIdentifier, SIGTERM)
                #expect(await listed.waitForExit().0 == 0)

                let cacheDir = temporaryDirectory()
                let open = try await ServeCommandTests.ServeProcess(
                    ["--local-root", root.path, "--allow-private-networks", "--cache-dir", cacheDir.path, "--fetch-timeout", "30"],
                    environment: ["WEBIMAGE_LOG_LEVEL": "error"])
                for _ in 0..<2 {
                    let web = try await get(open, client, http), local = try await get(open, client, "local:///images/logo.png")
                    #expect(web.status == 200 && local.status == 200)
                    #expect(try ImageCoderRegistry.default.decode(web.body).pixelWidth == 256)
                    #expect(try ImageCoderRegistry.default.decode(local.body).pixelWidth == 32)
                }
                // A file changed under the same name is read again (its ETag changed), not served from the source cache.
                try SampleImages.png(width: 20, height: 10, seed: 4).write(to: root.appendingPathComponent("images/logo.png"))
                let changed = try await get(open, client, "local:///images/logo.png?")
                #expect(changed.status == 400, "a query is refused, so it cannot make a second key for one file")
                let resized = try await ServeProcessAttackTests.get(
                    "http://127.0.0.1:\(open.port)/img?w=10&url=\(ServerHarness.encode("local:///images/logo.png"))", client: client)
                #expect(resized.status == 200)
                #expect(try ImageCoderRegistry.default.decode(resized.body).pixelHeight == 5, "the new file (20×10), not the cached 32×24")
                kill(open.process.processIdentifier, SIGTERM)
                #expect(await open.waitForExit().0 == 0)
                try await client.shutdown()
            }
        }
    }
}
