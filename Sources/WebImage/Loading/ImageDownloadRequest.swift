public import Foundation

/// One image download as a caller asks for it.
///
/// ```swift
/// var request = ImageDownloadRequest(url: url, priority: .high)
/// request.timeout = .seconds(5)
/// request.credentials = .init(user: "me", password: "secret")
/// let result = try await downloader.download(request)
/// ```
public struct ImageDownloadRequest: Sendable, Hashable {
    /// The image's URL; a user and password given in it move to ``credentials``.
    public var url: URL {
        didSet {
            let (plain, inURL) = Credentials.split(url)
            guard let inURL else { return }
            url = plain
            credentials = credentials ?? inURL
        }
    }
    public var priority: RequestPriority
    /// Extra headers for this request (added after the downloader's global headers).
    public var headers: [HTTPField]
    /// Overrides the downloader's timeout for this request.
    public var timeout: Duration?
    /// Used when the server challenges with `401` and `WWW-Authenticate: Basic`; overrides the
    /// downloader's credentials. A URL's own user and password (`https://me:secret@host/a.png`)
    /// become these credentials when none are given, and leave the URL, as URLSession, curl and
    /// Python's requests use them: they are then part of the request's identity, never of a cache
    /// key's or an index's URL.
    public var credentials: Credentials?
    /// Cache validators to send (`If-None-Match`, `If-Modified-Since`); a `304` answer is a
    /// result with ``DownloadResult/isNotModified`` set (no body).
    public var validators: CacheValidators?
    /// An explicit sharing identity: requests for the same URL with the same identity share one
    /// download whatever else (headers, credentials) differs; requests for different URLs never
    /// do. `nil` (the default) leaves it to ``ImageDownloaderConfiguration/sharing``, which
    /// compares everything that can change the response.
    public var identity: String?
    /// Minimum time between two progress reports to this caller (the last one always comes).
    public var progressInterval: Duration
    /// Whether progress reports carry the data received so far (for progressive decoding).
    public var wantsPartialData: Bool
    /// Retries this caller allows in all, shared with its own retries (``RetryBudget``); each
    /// retry the ``RetryPolicy`` allows draws one first. `nil` (the default): the policy alone.
    /// Not part of the sharing key: a shared download draws from its first caller's budget.
    public var retryBudget: RetryBudget?

    public init(
        url: URL, priority: RequestPriority = .normal, headers: [HTTPField] = [],
        timeout: Duration? = nil, credentials: Credentials? = nil, validators: CacheValidators? = nil,
        identity: String? = nil, progressInterval: Duration = .zero, wantsPartialData: Bool = false
    ) {
        let (plain, inURL) = Credentials.split(url)
        self.url = plain
        self.priority = priority
        self.headers = headers
        self.timeout = timeout
        self.credentials = credentials ?? inURL
        self.validators = validators
        self.identity = identity
        self.progressInterval = progressInterval
        self.wantsPartialData = wantsPartialData
    }
}

/// A user name and password for HTTP Basic authentication.
public struct Credentials: Sendable, Hashable {
    public var user: String
    public var password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// `url` without its user and password, and those as credentials (percent-decoded; a user
    /// without a password has an empty one). A URL without them comes back as it is.
    static func split(_ url: URL) -> (URL, Credentials?) {
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return (url, nil) }
        let credentials = Credentials(user: components.user ?? "", password: components.password ?? "")
        components.user = nil
        components.password = nil
        return (components.url ?? url, credentials)
    }

    /// The `Authorization` header value.
    public var basicAuthorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}

/// HTTP validators of a cached response, sent to ask "has it changed?".
public struct CacheValidators: Sendable, Hashable, Codable {
    public var etag: String?
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators a response carries, if any.
    public init?(response: DataResponse) {
        let etag = response.value(forHeader: "ETag"), modified = response.value(forHeader: "Last-Modified")
        guard etag != nil || modified != nil else { return nil }
        self.init(etag: etag, lastModified: modified)
    }

    var headers: [HTTPField] {
        var fields: [HTTPField] = []
        if let etag { fields.append(HTTPField("If-None-Match", etag)) }
        if let lastModified { fields.append(HTTPField("If-Modified-Since", lastModified)) }
        return fields
    }
}

/// How much of a download has arrived, as reported to one caller.
public struct DownloadProgress: Sendable, Equatable {
    /// Bytes received so far (including bytes resumed from an earlier attempt).
    public var received: Int
    /// Bytes expected in all, when the server said.
    public var expected: Int?
    /// The bytes so far, if the request asked for ``ImageDownloadRequest/wantsPartialData``.
    public var partialData: Data?

    public var fraction: Double? {
        guard let expected, expected > 0 else { return nil }
        return min(1, Double(received) / Double(expected))
    }
}
