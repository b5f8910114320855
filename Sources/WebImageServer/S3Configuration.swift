public import Foundation

/// Where and as whom `webimage serve` fetches `s3://BUCKET/KEY` sources (``S3SourceLoader``):
/// imgproxy's `IMGPROXY_USE_S3`, `IMGPROXY_S3_REGION` and `IMGPROXY_S3_ENDPOINT`, with the
/// credentials of the AWS command line (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`).
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
    public var accessKeyID: String
    public var secretAccessKey: String
    /// `AWS_SESSION_TOKEN` of temporary credentials, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?
    /// The signing region (default `us-east-1`, what MinIO and moto expect).
    public var region: String
    /// `http(s)://host[:port]` of an S3-compatible service, addressed path-style; `nil`: AWS.
    public var endpoint: URL?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String = "us-east-1", endpoint: URL? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
        self.endpoint = endpoint
    }

    /// A configuration the server cannot start with.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var description: String
    }
}
