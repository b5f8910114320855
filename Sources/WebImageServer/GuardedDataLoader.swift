import Foundation
public import WebImage

/// The server's ``DataLoading``: resolves each host itself, refuses private and other internal
/// addresses (``AddressClassifier``) unless allowed, connects only to the address it checked,
/// and follows redirects itself so that every hop is checked the same way.
///
/// ```swift
/// let loader = GuardedDataLoader(resolver: SystemHostResolver(), allowPrivateNetworks: false)
/// let downloader = ImageDownloader(loader: loader)
/// ```
public final class GuardedDataLoader: DataLoading {
    public let resolver: any HostResolving
    public let allowPrivateNetworks: Bool
    public let connector: any PinnedConnecting
    public let maxRedirects: Int

    public init(
        resolver: any HostResolving = SystemHostResolver(), allowPrivateNetworks: Bool = false,
        connector: any PinnedConnecting = PinnedHTTPConnector(), maxRedirects: Int = 10
    ) {
        self.resolver = resolver
        self.allowPrivateNetworks = allowPrivateNetworks
        self.connector = connector
        self.maxRedirects = maxRedirects
    }

    public func loadData(for request: DataRequest) async throws -> DataTransfer {
        var current = request
        for _ in 0...maxRedirects {
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
