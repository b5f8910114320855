public import WebImage
/// Which addresses a server-side fetch must not reach unless private networks are allowed.
///
/// Refused: loopback (127/8, ::1), RFC 1918 private (10/8, 172.16/12, 192.168/16), link-local
/// (169.254/16, fe80::/10), CGNAT (100.64/10), unique local IPv6 (fc00::/7, and the deprecated
/// site-local fec0::/10), "this network" (0/8, ::), multicast (224/4, ff00::/8), reserved and
/// broadcast (240/4), IETF protocol assignments (192.0.0/24: DS-Lite, NAT64 discovery) and the
/// benchmarking range (198.18/15), none of them globally reachable (RFC 6890); local-use NAT64
/// (64:ff9b:1::/48, RFC 8215: the site's own translator); and the same IPv4 ranges inside IPv6
/// (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64
/// 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48).
///
/// ```swift
/// AddressClassifier.classify(IPAddress("192.168.1.10")!)   // .privateNetwork
/// AddressClassifier.classify(IPAddress("93.184.216.34")!)  // nil: public
/// ```
public enum AddressClassifier {
    public enum AddressClass: String, Sendable, Hashable, CaseIterable {
        case loopback, privateNetwork = "private", linkLocal = "link-local", sharedAddressSpace = "cgnat"
        case uniqueLocal = "unique-local", unspecified, multicast, reserved
    }

    /// The refused class of `address`, or `nil` for a public address.
    public static func classify(_ address: IPAddress) -> AddressClass? {
        let b = address.bytes
        if b.count == 4 { return classifyIPv4(b[0], b[1], b[2], b[3]) }
        let firstTen = b[0..<10].allSatisfy { $0 == 0 }
        // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated) carry an IPv4 address.
        if firstTen, (b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0) {
            if b[10] == 0, b[12] == 0, b[13] == 0, b[14] == 0 {
                if b[15] == 0 { return .unspecified }   // ::
                if b[15] == 1 { return .loopback }      // ::1
            }
            return classifyIPv4(b[12], b[13], b[14], b[15])
        }
        // ::ffff:0:a.b.c.d, SIIT's IPv4-translated form (RFC 7915).
        if b[0..<8].allSatisfy({ $0 == 0 }), b[8] == 0xff, b[9] == 0xff, b[10] == 0, b[11] == 0 {
            return classifyIPv4(b[12], b[13], b[14], b[15])
        }
        // 64:ff9b::/96, the well-known NAT64 prefix, reaches the embedded IPv4 address.
        if b[0] == 0, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4..<12].allSatisfy({ $0 == 0 }) {
            return classifyIPv4(b[12], b[13], b[14], b[15])
        }
        // 64:ff9b:1::/48, NAT64 for local use: whatever it embeds, it is the site's own translator.
        if b[0] == 0, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4] == 0, b[5] == 1 { return .privateNetwork }
        // 2002::/16, 6to4: bytes 2–5 are an IPv4 address (a relay on the site's network forwards to it).
        if b[0] == 0x20, b[1] == 0x02, let embedded = classifyIPv4(b[2], b[3], b[4], b[5]) { return embedded }
        if b[0] == 0xff { return .multicast }
        if b[0] & 0xfe == 0xfc { return .uniqueLocal }
        if b[0] == 0xfe, b[1] & 0xc0 == 0x80 { return .linkLocal }
        if b[0] == 0xfe, b[1] & 0xc0 == 0xc0 { return .uniqueLocal }   // fec0::/10 site-local
        return nil
    }

    private static func classifyIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> AddressClass? {
        switch a {
        case 0: return .unspecified
        case 10: return .privateNetwork
        case 127: return .loopback
        case 100 where b & 0xc0 == 64: return .sharedAddressSpace
        case 169 where b == 254: return .linkLocal
        case 172 where b & 0xf0 == 16: return .privateNetwork
        case 192 where b == 168: return .privateNetwork
        case 192 where b == 0 && c == 0: return .reserved  // 192.0.0/24, IETF protocol assignments
        case 198 where b & 0xfe == 18: return .reserved    // 198.18/15, benchmarking
        case 224...239: return .multicast
        case 240...255: return .reserved
        default: return nil
        }
    }
}

/// A fetch stopped because the source's address is in a refused class.
public struct AddressRefusal: Error, PermanentlyFailing, Sendable, CustomStringConvertible {
    public var host: String
    public var addressClass: AddressClassifier.AddressClass
    public var description: String { "the source host \(host) resolves to a \(addressClass.rawValue) address, which is not allowed" }
}
