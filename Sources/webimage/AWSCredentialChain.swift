import Foundation
import WebImageServer

/// Where `serve --use-s3` finds its credentials: the AWS SDKs' default chain, in their order —
/// the environment's keys, a profile of the shared credentials file, the ECS/EKS container role,
/// the EC2 instance role (IMDSv2). Not followed: web identity (`AWS_WEB_IDENTITY_TOKEN_FILE`, EKS's
/// older IRSA, which needs an STS call), `credential_process`, SSO and `~/.aws/config`'s roles.
enum AWSCredentialChain {
    /// Hosts `AWS_CONTAINER_CREDENTIALS_FULL_URI` may name over plain http, as the SDKs allow:
    /// loopback (`localhost`, resolved by the system's hosts file), and the ECS and EKS Pod Identity agents.
    static let containerHosts: Set<String> = ["169.254.170.2", "169.254.170.23", "fd00:ec2::23", "[fd00:ec2::23]", "localhost"]

    static func resolve(_ env: [String: String], home: String = NSHomeDirectory()) throws -> S3CredentialSource {
        func value(_ name: String) -> String? { env[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let id = value("AWS_ACCESS_KEY_ID") {
            guard let secret = value("AWS_SECRET_ACCESS_KEY") else { throw CLIError("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not") }
            return .keys(S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN")))
        }
        let profile = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        let file = value("AWS_SHARED_CREDENTIALS_FILE") ?? "\(home)/.aws/credentials"
        if let keys = try profileKeys(file: file, profile: profile ?? "default") { return .keys(keys) }
        if let profile { throw CLIError("AWS_PROFILE=\(profile): no such profile with keys in \(file)") }
        if let relative = value("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
            guard relative.hasPrefix("/"), let url = URL(string: "http://169.254.170.2\(relative)") else {
                throw CLIError("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=\(relative) is not a path")
            }
            return .container(url: url, authorization: value("AWS_CONTAINER_AUTHORIZATION_TOKEN"), authorizationFile: value("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
        }
        if let full = value("AWS_CONTAINER_CREDENTIALS_FULL_URI") {
            guard let url = URL(string: full), let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(),
                  scheme == "https" || (scheme == "http" && (containerHosts.contains(host) || isLoopback(host)))
            else { throw CLIError("AWS_CONTAINER_CREDENTIALS_FULL_URI=\(full) must be https, or http on loopback or the ECS/EKS agent's address") }
            return .container(url: url, authorization: value("AWS_CONTAINER_AUTHORIZATION_TOKEN"), authorizationFile: value("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
        }
        if value("AWS_EC2_METADATA_DISABLED")?.lowercased() == "true" {
            throw CLIError("--use-s3 found no AWS credentials: none in the environment, no profile in \(file), no container role, and AWS_EC2_METADATA_DISABLED=true")
        }
        guard let endpoint = value("AWS_EC2_METADATA_SERVICE_ENDPOINT") else { return .instanceMetadata(endpoint: S3CredentialSource.defaultInstanceMetadataEndpoint) }
        guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw CLIError("AWS_EC2_METADATA_SERVICE_ENDPOINT=\(endpoint) is not an http(s) URL")
        }
        return .instanceMetadata(endpoint: url)
    }

    /// An IPv4 literal in 127/8, or `::1`: not a name (`127.evil.example` is a name).
    static func isLoopback(_ host: String) -> Bool {
        if host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
    }

    /// `aws_access_key_id`, `aws_secret_access_key` and `aws_session_token` of `[profile]` in the
    /// INI file at `file`; `nil` when the file or the profile's keys are not there.
    static func profileKeys(file: String, profile: String) throws -> S3Credentials? {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int else { return nil }
        guard size <= 1 << 20, let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw CLIError("\(file) cannot be read as a credentials file")
        }
        var section: String?, values: [String: String] = [:]
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                continue
            }
            guard section == profile, let equals = line.firstIndex(of: "=") else { continue }
            values[line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        }
        guard let id = values["aws_access_key_id"], !id.isEmpty, let secret = values["aws_secret_access_key"], !secret.isEmpty else { return nil }
        return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
    }
}
