public import Foundation

/// The keys S3 requests are signed with: long-lived (an IAM user's) or temporary (a role's, with
/// a session token and an expiry).
public struct S3Credentials: Sendable, Equatable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Sent as `X-Amz-Security-Token` with temporary credentials.
    public var sessionToken: String?
    /// When temporary credentials stop working; `nil`: they do not expire.
    public var expiration: Date?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, expiration: Date? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }
}

/// Where `webimage serve` gets its S3 credentials, as the AWS SDKs' default chain does: keys it
/// is given, or a role's temporary keys from the platform, fetched when first needed and again
/// five minutes before they expire.
///
/// ```swift
/// // On ECS or EKS (Pod Identity): the agent's address, from the variables the platform sets.
/// let source = S3CredentialSource.container(url: URL(string: "http://169.254.170.2/v2/credentials/…")!, authorization: nil)
/// // On EC2: the instance's role, through IMDSv2.
/// let onEC2 = S3CredentialSource.instanceMetadata(endpoint: S3CredentialSource.defaultInstanceMetadataEndpoint)
/// ```
public enum S3CredentialSource: Sendable, Equatable {
    /// Fixed keys (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, or a profile
    /// of `~/.aws/credentials`).
    case keys(S3Credentials)
    /// The ECS task's or EKS pod's role: a GET of `url` (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`
    /// under `http://169.254.170.2`, or `AWS_CONTAINER_CREDENTIALS_FULL_URI`), with `authorization`
    /// (`AWS_CONTAINER_AUTHORIZATION_TOKEN`) or the contents of `authorizationFile`
    /// (`AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`, read at each fetch: the platform rotates it) as
    /// the `Authorization` header.
    case container(url: URL, authorization: String?, authorizationFile: String? = nil)
    /// The EC2 instance's role through IMDSv2: a session token from `PUT /latest/api/token`, then
    /// the role's name and keys under `/latest/meta-data/iam/security-credentials/`.
    case instanceMetadata(endpoint: URL)

    /// `http://169.254.169.254`, IMDS's address (`AWS_EC2_METADATA_SERVICE_ENDPOINT` changes it).
    public static let defaultInstanceMetadataEndpoint = URL(string: "http://169.254.169.254")!
}

extension S3CredentialSource {
    /// The credentials this source gives now: the keys themselves, or one fetch from the platform
    /// (2 s a request). `webimage serve` calls it once at start, so that a server that cannot get
    /// credentials says so before it listens.
    ///
    /// ```swift
    /// let keys = try await S3CredentialSource.instanceMetadata(endpoint: S3CredentialSource.defaultInstanceMetadataEndpoint).fetch()
    /// ```
    public func fetch() async throws(S3SourceError) -> S3Credentials {
        try await S3CredentialFetch.credentials(from: self)
    }
}
