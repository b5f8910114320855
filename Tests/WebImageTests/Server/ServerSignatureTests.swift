import Foundation
import Testing
import WebImage
import WebImageOrigin
import WebImageServer

extension ServerTests {
    /// Signed URLs, key rotation, `webimage sign`, and `--allow-source`.
    @Suite("Image server: signatures and allowed sources")
    struct ServerSignatureTests {
        static let oldKey = Data("old-secret".utf8), newKey = Data("new-secret".utf8)

        @Test func signerMatchesAKnownVector() {
            // HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog") = f7bc83f4…2d1a3cd8,
            // the widely published example (checked with Python's hmac), in unpadded base64url.
            let signature = URLSigner.signature(of: "The quick brown fox jumps over the lazy dog", key: Data("key".utf8))
            #expect(signature == "97yD9DBThCSxMpjmqm-xQ-9NWaFJRhdZl0edvC0aPNg")
            #expect(!signature.contains("=") && !signature.contains("+") && !signature.contains("/"))
        }

        @Test func signedURLsPassAndOthersAre403() async throws {
            try await withImageServer({ $0.signingKeys = [Self.newKey, Self.oldKey] }) { harness in
                let path = harness.imgPath([("url", harness.origin.imageURL("photo.jpg").absoluteString), ("w", "50")])
                let byNew = URLSigner(keys: [Self.newKey]).sign(path), byOld = URLSigner(keys: [Self.oldKey]).sign(path)
                #expect(try await harness.get(byNew).status == 200)
                #expect(try await harness.get(byOld).status == 200, "any configured key verifies (rotation)")
                let wrong = URLSigner(keys: [Data("other".utf8)]).sign(path)
                for refused in [path, wrong, byNew.replacingOccurrences(of: "w=50", with: "w=51"), path + "&s=", path + "&s=AAAA"] {
                    let reply = try await harness.get(refused)
                    ServerErrorTests.expectError(reply, 403, "bad_signature")
                }
                #expect(harness.origin.totalRequests == 1, "refused requests fetch nothing")
            }
        }

        /// One signed URL has one spelling (red team, stop 53): the same MAC with a `=` added or
        /// with other unused final bits verified too, five spellings a signature.
        @Test func onlyTheCanonicalSpellingOfASignatureVerifies() {
            let signer = URLSigner(keys: [Self.newKey]), path = "/img?url=x&w=10"
            let signed = signer.sign(path)
            #expect(signer.verify(signed))
            let signature = String(signed[signed.range(of: "&s=")!.upperBound...])
            // 32 bytes in 43 characters: the last carries 4 bits and 2 unused ones.
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let last = alphabet.firstIndex(of: signature.last!)!
            let respelt = (1..<4).map { String(signature.dropLast()) + String(alphabet[last ^ $0]) }
            for other in respelt + [signature + "=", signature + "=="] {
                #expect(!signer.verify(path + "&s=" + other), "\(other)")
            }
        }

        @Test func withoutKeysSignaturesAreOff() async throws {
            try await withImageServer { harness in
                let reply = try await harness.image("photo.jpg", [("w", "20")])
                #expect(reply.status == 200)
            }
        }

        @Test func signCommandPrintsAPathTheServerAccepts() async throws {
            try await withImageServer({ $0.signingKeys = [Self.newKey] }) { harness in
                let source = harness.origin.imageURL("landscape.jpg").absoluteString
                let result = try await WebImageCommand.run(["sign", source, "--key", "new-secret", "--width", "120", "--fit", "inside", "--process", "grayscale"])
                #expect(result.status == 0, "\(result.stderr)")
                let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(path.hasPrefix("/img?url=http%3A%2F%2F127.0.0.1%3A") && path.contains("&w=120&fit=inside&process=grayscale&s="))
                let reply = try await harness.get(path)
                #expect(reply.status == 200)
                #expect(try ImageCoderRegistry.default.decode(reply.body).pixelWidth == 120)
                let asIs = try await WebImageCommand.run(["sign", "/img?url=x", "--key", "k"])
                #expect(asIs.stdout.hasPrefix("/img?url=x&s=" + URLSigner.signature(of: "/img?url=x", key: Data("k".utf8))))
                let missing = try await WebImageCommand.run(["sign", source], environment: ["WEBIMAGE_KEY": ""])
                #expect(missing.status != 0 && missing.stderr.contains("--key"))
            }
        }

        @Test func allowedSourcesLimitWhatIsFetched() async throws {
            try await withOrigin { origin in
                try await withImageServer(origin: origin, { $0.allowedSources = ["http://127.0.0.1:1/never/", "http://127.0.0.1:\(origin.port)/images/"] }) { harness in
                    let reply = try await harness.image("photo.jpg", [("w", "20")])
                    #expect(reply.status == 200)
                }
            }
            try await withImageServer({ $0.allowedSources = ["https://images.example.com/"] }) { harness in
                ServerErrorTests.expectError(try await harness.image("photo.jpg", [("w", "20")]), 403, "source_not_allowed")
                #expect(harness.origin.totalRequests == 0)
            }
        }
    }
}
