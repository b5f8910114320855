import Foundation
import WebImageServer

extension ServeOptions {
    /// `--local-root`, `--use-s3`, `--s3-region` and `--s3-endpoint` (or their variables), and
    /// where the AWS credentials come from (``AWSCredentialChain``), checked now: a root that is not
    /// a directory, or S3 without any credentials, stops the server before it listens.
    func sources(_ env: [String: String], into c: inout ImageServerConfiguration) throws {
        if let root = try Self.value(localRoot, "WEBIMAGE_LOCAL_ROOT", env) {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw CLIError("--local-root: \(root) is not a directory")
            }
            c.localRoot = root
        }
        let region = try Self.value(s3Region, "WEBIMAGE_S3_REGION", env)
        let endpoint = try Self.value(s3Endpoint, "WEBIMAGE_S3_ENDPOINT", env)
        guard useS3 || ["1", "true", "yes"].contains(env["WEBIMAGE_USE_S3"]?.lowercased() ?? "") else {
            if region != nil || endpoint != nil { throw CLIError("--s3-region and --s3-endpoint need --use-s3") }
            return
        }
        var s3 = S3Configuration(
            credentials: try AWSCredentialChain.resolve(env),
            region: region ?? [env["AWS_REGION"], env["AWS_DEFAULT_REGION"]].compactMap { $0 }.first { !$0.isEmpty } ?? "us-east-1")
        if let endpoint {
            guard let url = URL(string: endpoint) else { throw CLIError("--s3-endpoint: '\(endpoint)' is not a URL") }
            s3.endpoint = url
        }
        c.s3 = s3
    }
}
