import Testing
import WebImageServer

/// The SSRF classifier as a unit, on addresses only: nothing here touches the network.
@Suite("Image server: address classes")
struct AddressClassifierTests {
    typealias Class = AddressClassifier.AddressClass

    static let refused: [(String, Class)] = [
        ("127.0.0.1", .loopback), ("127.255.255.254", .loopback), ("::1", .loopback),
        ("10.0.0.1", .privateNetwork), ("10.255.255.255", .privateNetwork),
        ("172.16.0.1", .privateNetwork), ("172.31.255.255", .privateNetwork),
        ("192.168.0.1", .privateNetwork), ("192.168.255.255", .privateNetwork),
        ("169.254.169.254", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace),
        ("fc00::1", .uniqueLocal), ("fd12:3456:789a::1", .uniqueLocal), ("fec0::1", .uniqueLocal),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("240.0.0.1", .reserved), ("255.255.255.255", .reserved),
        // IPv4 inside IPv6: mapped, compatible and NAT64 forms of each IPv4 class.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.1.2.3", .privateNetwork), ("::ffff:172.20.0.1", .privateNetwork),
        ("::ffff:192.168.1.1", .privateNetwork), ("::ffff:169.254.169.254", .linkLocal),
        ("::ffff:100.64.1.1", .sharedAddressSpace), ("::ffff:0.0.0.0", .unspecified), ("::ffff:224.0.0.1", .multicast),
        ("::ffff:7f00:1", .loopback), ("::10.0.0.1", .privateNetwork), ("64:ff9b::192.168.0.1", .privateNetwork),
        ("64:ff9b::7f00:1", .loopback),
        // Not globally reachable (red-team review): IETF assignments, benchmarking, local-use
        // NAT64, SIIT's translated form, 6to4 over a private address.
        ("192.0.0.8", .reserved), ("192.0.0.170", .reserved), ("198.18.0.1", .reserved), ("198.19.255.255", .reserved),
        ("64:ff9b:1::a00:1", .privateNetwork), ("64:ff9b:1:ffff::1", .privateNetwork), ("::ffff:0:7f00:1", .loopback),
        ("::ffff:0:a9fe:a9fe", .linkLocal), ("2002:7f00:1::1", .loopback), ("2002:c0a8:101::1", .privateNetwork),
    ]

    static let allowed = [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "203.0.113.10", "172.15.255.255", "172.32.0.0", "100.63.255.255",
        "100.128.0.0", "169.253.0.1", "192.167.255.255", "11.0.0.1", "126.255.255.255", "223.255.255.255",
        "2001:4860:4860::8888", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "fbff::1", "fe7f::1",
        "192.0.1.1", "192.1.0.1", "198.17.255.255", "198.20.0.1", "64:ff9b:2::1", "::ffff:0:808:808", "2002:808:808::1",
    ]

    @Test(arguments: refused) func refusedClasses(_ text: String, _ expected: Class) throws {
        let address = try #require(IPAddress(text))
        #expect(AddressClassifier.classify(address) == expected, "\(text)")
    }

    @Test(arguments: allowed) func publicAddressesPass(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(AddressClassifier.classify(address) == nil, "\(text)")
    }

    @Test func parsing() {
        #expect(IPAddress("::ffff:10.0.0.1")?.bytes.count == 16)
        #expect(IPAddress("10.0.0.1")?.description == "10.0.0.1")
        #expect(IPAddress("FE80:0:0::1")?.description == "fe80::1")
        for bad in ["", "example.com", "1.2.3", "256.0.0.1", "[::1]", "::1%lo", "1.2.3.4.5"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
    }
}
