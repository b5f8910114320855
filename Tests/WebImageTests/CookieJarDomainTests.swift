import Foundation
import Testing
import WebImage

/// RFC 6265 § 5.1.3 domain-matching in the jar (red team, stop 49): `Domain=0.0.1` set by
/// 127.0.0.1 was sent to 10.0.0.1, and `Domain=com` to every `.com` host.
@Suite("Cookie jar: Domain attributes match host names, never addresses or single labels")
struct CookieJarDomainTests {
    @Test func domainsMatchOnlyHostNamesUnderTwoLabels() throws {
        let jar = CookieJar()
        jar.store(setCookie: ["a=1; Domain=0.0.1", "b=2; Domain=127.0.0.1", "c=3"], from: try #require(URL(string: "http://127.0.0.1/x")))
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://10.0.0.1/"))) == nil)
        #expect(jar.cookieHeader(for: try #require(URL(string: "http://127.0.0.1/"))).map { Set($0.components(separatedBy: "; ")) } == ["b=2", "c=3"])

        jar.store(setCookie: ["d=4; Domain=com", "e=5; Domain=example.com"], from: try #require(URL(string: "https://shop.example.com/")))
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://other.com/"))) == nil, "a single label is a public suffix")
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://img.example.com/"))) == "e=5")
        #expect(jar.cookieHeader(for: try #require(URL(string: "https://example.com/"))) == "e=5")
    }
}
