import Foundation
import Testing
import WebImage

/// RFC 6265 § 5.1.3 domain-matching in the jar (red team, stop 49): `Domain=0.0.1` set by
/// 127.0.0.1 was sent to 10.0.0.1, and `Domain=com` to every `.com` host; `Domain=co.uk` was
/// accepted until the jar read the Public Suffix List.
@Suite("Cookie jar: Domain attributes match host names, never addresses or public suffixes")
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

    /// A site under a public suffix cannot set cookies for its neighbours (RFC 6265 § 5.3 step 5,
    /// as curl and browsers read the Public Suffix List): ICANN's `co.uk` and a private
    /// registry's `github.io` alike. From the suffix's own host the cookie stays with that host.
    @Test func publicSuffixesAreNoCookieDomains() throws {
        func url(_ text: String) throws -> URL { try #require(URL(string: text)) }
        let jar = CookieJar()
        jar.store(setCookie: ["a=1; Domain=co.uk", "b=2; Domain=example.co.uk"], from: try url("https://shop.example.co.uk/"))
        #expect(jar.cookieHeader(for: try url("https://bank.co.uk/")) == nil, "co.uk is a public suffix")
        #expect(jar.cookieHeader(for: try url("https://img.example.co.uk/")) == "b=2")

        jar.store(setCookie: ["c=3; Domain=github.io"], from: try url("https://alice.github.io/"))
        #expect(jar.cookieHeader(for: try url("https://bob.github.io/")) == nil, "github.io is a private registry's suffix")
        #expect(jar.cookieHeader(for: try url("https://alice.github.io/")) == nil, "the cookie was refused, not kept host-only")

        jar.store(setCookie: ["d=4; Domain=github.io"], from: try url("https://github.io/"))
        #expect(jar.cookieHeader(for: try url("https://github.io/")) == "d=4")
        #expect(jar.cookieHeader(for: try url("https://carol.github.io/")) == nil)
    }
}
