import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One fetch of temporary credentials from the platform (``S3CredentialSource/container(url:authorization:authorizationFile:)``
/// or ``S3CredentialSource/instanceMetadata(endpoint:)``), as the AWS SDKs do it: 2 s a request, a
/// body of at most 64 KiB, no redirects. The address is the operator's (or the platform's), never a
/// request's, so it is not under the sources' address rules.
enum S3CredentialFetch {
    static let timeout = TimeAmount.seconds(2)
    /// The whole fetch (IMDS makes three requests), however slowly a service drips its bytes.
    static let deadline = Duration.seconds(6)
    static let maxBody = 64 << 10
    /// Its own client: no redirects (a token must not follow one), no tracing (a credentials URL
    /// in a span is a secret in a span), 2 s to connect and between reads. It lives as long as the
    /// process, as `HTTPClient.shared` does.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = .init(connect: timeout, read: timeout)
        configuration.tracing.tracer = nil
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// ``fetch(_:)`` within ``deadline``.
    static func credentials(from source: S3CredentialSource) async throws(S3SourceError) -> S3Credentials {
        if case .keys(let keys) = source { return keys }
        let work = Task { () -> Result<S3Credentials, S3SourceError> in
            do throws(S3SourceError) { return .success(try await fetch(source)) } catch { return .failure(error) }
        }
        guard let outcome = await Deadline.value(of: work, timeout: deadline) else {
            throw S3SourceError.credentialsUnavailable("the credentials service did not answer within \(deadline)")
        }
        return try outcome.get()
    }

    static func fetch(_ source: S3CredentialSource) async throws(S3SourceError) -> S3Credentials {
        do {
            switch source {
            case .keys(let keys):
                return keys
            case .container(let url, let authorization, let file):
                var headers: [(String, String)] = []
                if let file {
                    let token = try String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                    headers.append(("Authorization", token))
                } else if let authorization {
                    headers.append(("Authorization", authorization))
                }
                return try parse(try await send(.GET, url, headers: headers))
            case .instanceMetadata(let endpoint):
                let base = endpoint.absoluteString.hasSuffix("/") ? String(endpoint.absoluteString.dropLast()) : endpoint.absoluteString
                guard let tokenURL = URL(string: "\(base)/latest/api/token"), let listURL = URL(string: "\(base)/latest/meta-data/iam/security-credentials/")
                else { throw S3SourceError.credentialsUnavailable("\(base) is not a metadata service address") }
                let token = String(decoding: try await send(.PUT, tokenURL, headers: [("X-aws-ec2-metadata-token-ttl-seconds", "21600")]), as: UTF8.self)
                let list = listURL.absoluteString
                let roles = String(decoding: try await send(.GET, listURL, headers: [("X-aws-ec2-metadata-token", token)]), as: UTF8.self)
                guard let role = roles.split(whereSeparator: \.isNewline).first.map(String.init), !role.isEmpty,
                      let roleURL = URL(string: list + (role.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? role))
                else { throw S3SourceError.credentialsUnavailable("the instance has no IAM role") }
                return try parse(try await send(.GET, roleURL, headers: [("X-aws-ec2-metadata-token", token)]))
            }
        } catch let error as S3SourceError {
            throw error
        } catch {
            throw S3SourceError.credentialsUnavailable("\(error)")
        }
    }

    static func send(_ method: HTTPMethod, _ url: URL, headers: [(String, String)]) async throws -> Data {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await client.execute(request, timeout: timeout)
        let body = try await response.body.collect(upTo: maxBody)
        guard response.status == .ok else {
            throw S3SourceError.credentialsUnavailable("\(method.rawValue) \(url.path) answered \(response.status.code)")
        }
        return Data(buffer: body)
    }

    /// The JSON both services answer: `AccessKeyId`, `SecretAccessKey`, `Token`, `Expiration`
    /// (ISO 8601), and from IMDS a `Code` that must be `Success`.
    static func parse(_ body: Data) throws -> S3Credentials {
        struct Reply: Decodable {
            var Code: String?
            var AccessKeyId: String
            var SecretAccessKey: String
            var Token: String?
            var Expiration: String?
        }
        let reply = try JSONDecoder().decode(Reply.self, from: body)
        if let code = reply.Code, code != "Success" { throw S3SourceError.credentialsUnavailable("the metadata service answered \(code)") }
        guard !reply.AccessKeyId.isEmpty, !reply.SecretAccessKey.isEmpty else { throw S3SourceError.credentialsUnavailable("the answer holds no keys") }
        var expiration: Date?
        if let text = reply.Expiration {
            let formatter = ISO8601DateFormatter()
            guard let date = formatter.date(from: text) ?? { formatter.formatOptions.insert(.withFractionalSeconds); return formatter.date(from: text) }()
            else { throw S3SourceError.credentialsUnavailable("the expiry \(text) is not an ISO 8601 date") }
            expiration = date
        }
        return S3Credentials(
            accessKeyID: reply.AccessKeyId, secretAccessKey: reply.SecretAccessKey, sessionToken: reply.Token.flatMap { $0.isEmpty ? nil : $0 },
            expiration: expiration)
    }
}
