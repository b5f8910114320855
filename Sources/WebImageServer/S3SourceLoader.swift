public import Foundation
public import WebImage

/// `s3://BUCKET/KEY` sources: a GET signed with AWS Signature V4 (``SignatureV4``), sent
/// through a ``GuardedDataLoader`` — so the body limit, the fetch timeout and the address rules
/// apply as to any source — to AWS or to the configured endpoint (``S3Configuration``).
///
/// Redirects are not followed (the `Authorization` header is for one host only): a `3xx` is a
/// `502`. A `4xx` with an S3 error body is an ``S3SourceError`` (its first 16 KiB read for the
/// code); a `404` stays a `404`. The answer keeps S3's `ETag`, `Last-Modified` and
/// `Cache-Control`, and names the `s3://` URL, the source caches' key.
///
/// ```swift
/// let s3 = try S3SourceLoader(S3Configuration(accessKeyID: id, secretAccessKey: secret),
///                             resolver: SystemHostResolver(), allowPrivateNetworks: false, connector: PinnedHTTPConnector())
/// let transfer = try await s3.loadData(for: DataRequest(url: URL(string: "s3://photos/2024/a.jpg")!))
/// ```
public final class S3SourceLoader: Sendable {
    public let configuration: S3Configuration
    /// The signing keys, fetched and refreshed when they come from the platform.
    let credentials: S3CredentialCache
    let transport: GuardedDataLoader
    /// `scheme://host[:port]` of the endpoint, when one is configured.
    private let endpointBase: String?

    public init(
        _ configuration: S3Configuration, resolver: any HostResolving, allowPrivateNetworks: Bool, connector: any PinnedConnecting
    ) throws(S3Configuration.Invalid) {
        self.configuration = configuration
        guard !configuration.region.isEmpty, configuration.region.utf8.count <= 64,
              configuration.region.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })
        else { throw .init(description: "the S3 region '\(configuration.region)' is not a region name (a-z, 0-9 and -)") }
        if case .keys(let keys) = configuration.credentials, keys.accessKeyID.isEmpty || keys.secretAccessKey.isEmpty {
            throw .init(description: "S3 sources need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        credentials = S3CredentialCache(configuration.credentials, seed: configuration.startingCredentials)
        if let endpoint = configuration.endpoint {
            guard let source = try? SourceURL(endpoint), source.scheme == "http" || source.scheme == "https", source.path == "/", source.query == nil else {
                throw .init(description: "the S3 endpoint '\(endpoint.absoluteString)' is not http(s)://host[:port]")
            }
            let base = source.url.absoluteString.hasSuffix("/") ? String(source.url.absoluteString.dropLast()) : source.url.absoluteString
            endpointBase = base
            // The operator's endpoint, and only it, may be on a private address.
            guard let only = try? SourceAllowList([base + "/"]) else { throw .init(description: "the S3 endpoint '\(base)' cannot be checked") }
            transport = GuardedDataLoader(resolver: resolver, allowPrivateNetworks: true, connector: connector, maxRedirects: 0, allowList: only)
        } else {
            endpointBase = nil
            guard let aws = try? SourceAllowList(["https://*.amazonaws.com"]) else { throw .init(description: "the AWS endpoints cannot be checked") }
            transport = GuardedDataLoader(
                resolver: resolver, allowPrivateNetworks: allowPrivateNetworks, connector: connector, maxRedirects: 0, allowList: aws)
        }
    }

    /// The URL an object is fetched from.
    func objectURL(bucket: String, keyPath: String) -> URL? {
        if let endpointBase { return URL(string: "\(endpointBase)/\(bucket)\(keyPath)") }
        let host = "s3.\(configuration.region).amazonaws.com"
        return URL(string: bucket.contains(".") ? "https://\(host)/\(bucket)\(keyPath)" : "https://\(bucket).\(host)\(keyPath)")
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        let source: SourceURL
        do throws(SourceURL.Problem) { source = try SourceURL(request.url) } catch { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
        guard source.scheme == SourceURL.s3Scheme, source.path != "/",
              let url = objectURL(bucket: source.host, keyPath: source.path), let target = try? SourceURL(url)
        else { throw ImageDownloadError.invalidURL(request.url.absoluteString) }
        let defaultPort = target.scheme == "https" ? 443 : 80
        let host = (target.host.contains(":") ? "[\(target.host)]" : target.host) + (target.port == defaultPort ? "" : ":\(target.port)")
        let keys = try await credentials.credentials()
        let signer = SignatureV4(accessKeyID: keys.accessKeyID, secretAccessKey: keys.secretAccessKey, region: configuration.region, service: "s3")
        let date = SignatureV4.amzDate(.now)
        var signed = [("host", host), ("x-amz-content-sha256", SignatureV4.emptyPayloadHash), ("x-amz-date", date)]
        if let token = keys.sessionToken { signed.append(("x-amz-security-token", token)) }
        let authorization = signer.authorization(
            method: "GET", path: target.path, query: "", headers: signed, payloadHash: SignatureV4.emptyPayloadHash, amzDate: date)
        var outgoing = request
        outgoing.url = target.url
        // Nothing from the caller may pass for a signed header.
        outgoing.headers.removeAll { ["host", "authorization"].contains($0.name.lowercased()) || $0.name.lowercased().hasPrefix("x-amz-") }
        outgoing.headers += signed.dropFirst().map { HTTPField($0.0, $0.1) } + [HTTPField("Authorization", authorization)]
        let transfer = try await transport.loadData(for: outgoing)
        var response = transfer.response
        if (400..<500).contains(response.statusCode), response.statusCode != 404 {
            let body = try await Self.prefix(of: transfer.body, bytes: 16 << 10)
            throw S3SourceError(status: response.statusCode, code: S3SourceError.code(inErrorBody: body))
        }
        response.url = source.url
        return DataTransfer(response: response, body: transfer.body)
    }

    /// At most `bytes` of `body` (the rest is dropped unread).
    static func prefix(of body: DataBody, bytes: Int) async throws -> [UInt8] {
        var kept: [UInt8] = []
        for try await chunk in body {
            kept += chunk.prefix(bytes - kept.count)
            if kept.count >= bytes { break }
        }
        return kept
    }
}
