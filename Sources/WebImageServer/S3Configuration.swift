public import Foundation

/// Where and as whom `webimage serve` fetches `s3://BUCKET/KEY` sources (``S3SourceLoader``):
/// imgproxy's `IMGPROXY_USE_S3`, `IMGPROXY_S3_REGION` and `IMGPROXY_S3_ENDPOINT`, with
/// credentials found as the AWS SDKs find them (``S3CredentialSource``: keys, a profile, the ECS or
/// EKS container role, the EC2 instance role).
///
/// Without an ``endpoint``: AWS, `https://BUCKET.s3.REGION.amazonaws.com/KEY` (a bucket with a
/// dot: `https://s3.REGION.amazonaws.com/BUCKET/KEY`, which its certificate covers), fetched
/// under the server's address rules like any source. With one (MinIO, R2, Ceph, moto):
/// `ENDPOINT/BUCKET/KEY` (path-style), and that one address is exempt from the private-network
/// rule — the operator chose it; a request names only the bucket and the key, never the host.
///
/// ```swift
/// var s3 = S3Configuration(accessKeyID: "AKIA…", secretAccessKey: "…", region: "eu-west-1")
/// s3.endpoint = URL(string: "http://127.0.0.1:9000")   // MinIO on this host
/// configuration.s3 = s3
/// ```
public struct S3Configuration: Sendable {
    /// Where the signing keys come from (``S3CredentialSource``).
    public var credentials: S3CredentialSource
    /// The signing region (default `us-east-1`, what MinIO and moto expect).
    public var region: String
    /// `http(s)://host[:port]` of an S3-compatible service, addressed path-style; `nil`: AWS.
    public var endpoint: URL?
    /// Keys already fetched from a role's ``credentials`` (`serve` fetches them at start, to stop
    /// early without them): used until they near their expiry, so the first request does not
    /// fetch them again. `nil`: fetched on first use.
    ///
    /// ```swift
    /// s3.startingCredentials = try await s3.credentials.fetch()
    /// ```
    public var startingCredentials: S3Credentials?

    public init(credentials: S3CredentialSource, region: String = "us-east-1", endpoint: URL? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
    }

    /// Fixed keys; `sessionToken` is `AWS_SESSION_TOKEN` of temporary credentials.
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1", endpoint: URL? = nil) {
        self.init(
            credentials: .keys(S3Credentials(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)),
            region: region, endpoint: endpoint)
    }

    /// A configuration the server cannot start with.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
    }
}
