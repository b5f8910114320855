import Foundation
public import WebImage

/// The server's `DataLoading`: resolves each host itself, refuses private and other internal
/// addresses (``AddressClassifier``) unless allowed, connects only to the address it checked,
/// and follows redirects itself so that every hop is checked the same way — against the
/// ``SourceAllowList`` too, and refused if it carries a user name or password. Each hop is
/// fetched in its normalised form (``SourceURL``), the form that was checked.
///
/// ```swift
/// let loader = GuardedDataLoader(resolver: SystemHostResolver(), allowPrivateNetworks: false,
///                                allowList: try SourceAllowList(["https://images.example.com/"]))
/// let downloader = ImageDownloader(loader: loader)
/// ```
public final class GuardedDataLoader: DataLoading {
    public let resolver: any HostResolving
    public let allowPrivateNetworks: Bool
    public let connector: any PinnedConnecting
    public let maxRedirects: Int
    public let allowList: SourceAllowList

    public init(
        resolver: any HostResolving = SystemHostResolver(), allowPrivateNetworks: Bool = false,
        connector: any PinnedConnecting = PinnedHTTPConnector(), maxRedirects: Int = 10,
        allowList: SourceAllowList = .everySource
    ) {
        self.allowList = allowList
        self.resolver = resolver
        self.allowPrivateNetworks = allowPrivateNetworks
        self.connector = connector
        self.maxRedirects = maxRedirects
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        var current = request
        for hop in 0...maxRedirects {
            current.url = try checkedSource(current.url, redirected: hop > 0).url
            let address = try await checkedAddress(for: current.url)
            let transfer = try await connector.loadData(for: current, address: address)
            let status = transfer.response.statusCode
            if [301, 302, 303, 307, 308].contains(status), let location = transfer.response.value(forHeader: "Location"),
               let next = URL(string: location, relativeTo: current.url)?.absoluteURL {
                // The redirect's body is dropped unread, which closes its connection.
                current.url = next
                continue
            }
            var response = transfer.response
            response.url = current.url
            return DataTransfer(response: response, body: transfer.body)
        }
        throw ImageDownloadError.tooManyRedirects
    }

    /// `url` normalised, if it has no user name or password and the allow-list allows it.
    func checkedSource(_ url: URL, redirected: Bool) throws -> SourceURL {
        let source: SourceURL
        let what = redirected ? "a redirect leads to a source that" : "the source"
        do throws(SourceURL.Problem) {
            source = try SourceURL(url)
        } catch .userInfo {
            throw ImageDownloadError.transport(underlying: SourceRefusal(reason: "\(what) has a user name or password in its URL"))
        } catch {
            throw ImageDownloadError.invalidURL(url.absoluteString)
        }
        guard source.scheme == "http" || source.scheme == "https" else {
            // A redirect to `local://` or `s3://` never reaches the file system or the bucket.
            throw ImageDownloadError.transport(underlying: SourceRefusal(reason: "\(what) is not an http or https URL"))
        }
        guard allowList.allows(source) else {
            throw ImageDownloadError.transport(underlying: SourceRefusal(reason: "\(what) is not on the allowed list"))
        }
        return source
    }

    /// The address to connect to for `url`'s host, after the check.
    func checkedAddress(for url: URL) async throws -> IPAddress {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host.map(Self.bare), !host.isEmpty
        else { throw ImageDownloadError.invalidURL(url.absoluteString) }
        let addresses: [IPAddress]
        do {
            addresses = try await resolver.resolve(host: host)
        } catch {
            throw ImageDownloadError.transport(underlying: error)
        }
        guard let first = addresses.first else { throw ImageDownloadError.transport(underlying: HostResolutionError(host: host)) }
        if !allowPrivateNetworks {
            // Any refused address refuses the name: a name that points inside is not a source.
            for address in addresses {
                if let refused = AddressClassifier.classify(address) {
                    throw ImageDownloadError.transport(underlying: AddressRefusal(host: host, addressClass: refused))
                }
            }
        }
        return first
    }

    /// A host without IPv6 brackets.
    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
