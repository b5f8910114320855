import Foundation
import Testing
import WebImage
import WebImageOrigin

@Suite("TLS: certificates are verified unless the caller opts out")
struct TLSTests {
    static var fixtures: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/tls") }

    func withTLSOrigin(_ body: (ImageOrigin) async throws -> Void) async throws {
        let certificate = try Data(contentsOf: Self.fixtures.appendingPathComponent("cert.pem"))
        let key = try Data(contentsOf: Self.fixtures.appendingPathComponent("key.pem"))
        let origin = try await ImageOrigin.start(files: SampleFiles.standard, tls: (certificate, key))
        do { try await body(origin) } catch { await origin.stop(); throw error }
        await origin.stop()
    }

    @Test(arguments: LoaderKind.allCases)
    func selfSignedCertificateIsRefusedByDefault(loader: LoaderKind) async throws {
        try await withTLSOrigin { origin in
            #expect(origin.baseURL.scheme == "https")
            // Default retry policy: a certificate failure is permanent, so it is not retried.
            let downloader = ImageDownloader(loader: loader.make())
            let error = await downloadError { _ = try await downloader.download(origin.imageURL("small.jpg")) }
            guard case .transport? = error else { Issue.record("expected a TLS failure, got \(String(describing: error))"); return }
            #expect(error?.isTransient == false)
            #expect(origin.totalRequests == 0)
        }
    }

    /// Only `HTTPDataLoader` can skip verification: `URLSessionDataLoader(allowsInvalidCertificates:)`
    /// is marked unavailable (FoundationNetworking on Linux has no way to turn it off), so that
    /// call does not compile — see its documentation.
    @Test func invalidCertificatesAreAcceptedWhenAllowed() async throws {
        try await withTLSOrigin { origin in
            let downloader = ImageDownloader(loader: HTTPDataLoader(allowsInvalidCertificates: true))
            let result = try await downloader.download(origin.imageURL("small.jpg"))
            #expect(result.data == SampleFiles.standard["small.jpg"])
        }
    }
}
