#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOPosix

/// Turns a host name into the addresses a fetch may connect to. The guarded loader checks
/// every address it returns and connects only to a checked one.
///
/// ```swift
/// struct Fixed: HostResolving {
///     func resolve(host: String) async throws -> [IPAddress] { [IPAddress("203.0.113.7")!] }
/// }
/// ```
public protocol HostResolving: Sendable {
    /// The addresses of `host`, most preferred first; throws when there are none.
    func resolve(host: String) async throws -> [IPAddress]
}

/// A host name that did not resolve.
public struct HostResolutionError: Error, Sendable, CustomStringConvertible {
    public var host: String
    public var description: String { "cannot resolve \(host)" }
}

/// The system resolver (`getaddrinfo`), called on NIO's blocking thread pool.
public struct SystemHostResolver: HostResolving {
    public init() {}

    public func resolve(host: String) async throws -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        let addresses = try await NIOThreadPool.singleton.runIfActive { Self.lookUp(host) }
        guard !addresses.isEmpty else { throw HostResolutionError(host: host) }
        return addresses
    }

    static func lookUp(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            if let address = entry.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                    }
                    if let ip = IPAddress(bytes: bytes), !result.contains(ip) { result.append(ip) }
                case AF_INET6:
                    let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    }
                    if let ip = IPAddress(bytes: bytes), !result.contains(ip) { result.append(ip) }
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        return result
    }
}

/// Fixed answers for some host names, the system resolver for the rest — what tests use to
/// make `rebind.test` resolve to `10.0.0.1` without touching DNS.
///
/// ```swift
/// var configuration = ImageServerConfiguration()
/// configuration.resolver = MappedHostResolver(["origin.test": [IPAddress("127.0.0.1")!]])
/// ```
public struct MappedHostResolver: HostResolving {
    public let names: [String: [IPAddress]]
    public let fallback: (any HostResolving)?

    public init(_ names: [String: [IPAddress]], fallback: (any HostResolving)? = SystemHostResolver()) {
        self.names = names
        self.fallback = fallback
    }

    public func resolve(host: String) async throws -> [IPAddress] {
        if let fixed = names[host.lowercased()], !fixed.isEmpty { return fixed }
        if let literal = IPAddress(host) { return [literal] }
        guard let fallback else { throw HostResolutionError(host: host) }
        return try await fallback.resolve(host: host)
    }
}
