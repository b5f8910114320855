import Foundation
import Testing
import WebImage

@Suite("HTTPCachePolicy: what the headers mean for the disk cache")
struct HTTPCachePolicyTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let url = URL(string: "https://example.com/a.jpg")!

    func response(_ headers: [String: String]) -> DataResponse {
        DataResponse(url: url, statusCode: 200, headers: headers.map { HTTPField($0.key, $0.value) })
    }

    func http(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// The lifetime the policy gives, in milliseconds' precision (Date arithmetic is not exact).
    func expiry(_ headers: [String: String], policy: HTTPCachePolicy = .init()) -> TimeInterval? {
        policy.metadata(for: response(headers), byteCount: 10, now: now)?.expiresAt.map { ($0.timeIntervalSince(now) * 1000).rounded() / 1000 }
    }

    @Test func maxAgeMinusAge() throws {
        #expect(expiry(["Cache-Control": "public, max-age=600"]) == 600)
        #expect(expiry(["Cache-Control": "max-age=600", "Age": "100"]) == 500)
        #expect(expiry(["Cache-Control": "max-age=60", "Age": "100"]) == 0)
        #expect(expiry(["cache-control": "MAX-AGE=\"30\""]) == 30)
        #expect(expiry(["Cache-Control": "max-age=oops"]) == 0)  // malformed: stale
        // Not delta-seconds (Double would parse them): stale, and never a NaN or infinite date.
        for bad in ["inf", "nan", "-5", "1e9", "+3"] { #expect(expiry(["Cache-Control": "max-age=\(bad)"]) == 0, "\(bad)") }
        #expect(expiry(["Cache-Control": "max-age=600", "Age": "nan"]) == 600)
        let capped = try #require(expiry(["Cache-Control": "max-age=99999999999999999999999"]))
        #expect(abs(capped - 2_147_483_648) < 1)  // cut to 2^31 s, as RFC 9111 § 1.2.2 says (a far date loses sub-second precision)
    }

    @Test func maxAgeWinsOverExpires() {
        #expect(expiry(["Cache-Control": "max-age=10", "Expires": http(now.addingTimeInterval(1000)), "Date": http(now)]) == 10)
    }

    @Test func expiresCountsFromTheDateHeader() {
        // The origin's clock is an hour behind ours: the lifetime is Expires − Date, not Expires − now.
        let originNow = now.addingTimeInterval(-3600)
        #expect(expiry(["Expires": http(originNow.addingTimeInterval(300)), "Date": http(originNow)]) == 300)
        #expect(expiry(["Expires": http(now.addingTimeInterval(300)), "Date": http(now), "Age": "50"]) == 250)
        #expect(expiry(["Expires": http(now.addingTimeInterval(120))]) == 120)  // no Date: ours
        #expect(expiry(["Expires": http(now.addingTimeInterval(-10)), "Date": http(now)]) == 0)
    }

    @Test func invalidExpiresIsAlreadyStale() {
        #expect(expiry(["Expires": "0"]) == 0)
        #expect(expiry(["Expires": "not a date"]) == 0)
    }

    @Test func obsoleteDateFormatsParse() {
        #expect(expiry(["Expires": "Friday, 15-Jan-27 08:00:00 GMT", "Date": "Friday, 15-Jan-27 07:00:00 GMT"]) == 3600)
        #expect(expiry(["Expires": "Fri Jan 15 08:00:00 2027", "Date": "Fri Jan 15 07:59:00 2027"]) == 60)
    }

    @Test func noStoreIsNeverStored() {
        #expect(HTTPCachePolicy().metadata(for: response(["Cache-Control": "no-store"]), byteCount: 1, now: now) == nil)
        #expect(HTTPCachePolicy().metadata(for: response(["Cache-Control": "private, No-Store, max-age=60"]), byteCount: 1, now: now) == nil)
    }

    @Test func noCacheIsStoredButNeedsRevalidation() throws {
        let metadata = try #require(HTTPCachePolicy().metadata(
            for: response(["Cache-Control": "no-cache", "ETag": "\"e1\""]), byteCount: 1, now: now))
        #expect(metadata.requiresRevalidation)
        #expect(!metadata.isFresh(at: now))
        #expect(metadata.validators == CacheValidators(etag: "\"e1\"", lastModified: nil))
    }

    @Test func noFreshnessInformationUsesTheDefaultAge() {
        #expect(expiry([:]) == 604_800)
        #expect(expiry([:], policy: HTTPCachePolicy(defaultMaxAge: .seconds(90))) == 90)
        // Last-Modified alone gives no lifetime unless heuristic freshness is on.
        #expect(expiry(["Last-Modified": http(now.addingTimeInterval(-86_400 * 10))]) == 604_800)
    }

    @Test func heuristicFreshnessIsATenthOfTheAge() {
        let policy = HTTPCachePolicy(heuristicFreshness: true)
        #expect(expiry(["Last-Modified": http(now.addingTimeInterval(-10_000)), "Date": http(now)], policy: policy) == 1000)
        #expect(expiry(["Last-Modified": http(now.addingTimeInterval(-10_000)), "Cache-Control": "max-age=5"], policy: policy) == 5)
    }

    @Test func metadataKeepsTheResponsesFields() throws {
        let metadata = try #require(HTTPCachePolicy().metadata(
            for: response(["Content-Type": "image/png", "ETag": "\"x\"", "Last-Modified": "Sat, 01 Nov 2025 00:00:00 GMT"]),
            byteCount: 42, now: now))
        #expect(metadata.url == url.absoluteString && metadata.contentType == "image/png" && metadata.byteCount == 42)
        #expect(metadata.etag == "\"x\"" && metadata.lastModified == "Sat, 01 Nov 2025 00:00:00 GMT")
        #expect(metadata.storedAt == now && metadata.lastAccess == now && !metadata.requiresRevalidation)
    }

    @Test func refreshedAfterA304() throws {
        let policy = HTTPCachePolicy()
        let cached = try #require(policy.metadata(for: response(["Cache-Control": "max-age=60", "ETag": "\"a\""]), byteCount: 1, now: now))
        let later = now.addingTimeInterval(600)
        // A 304 with new headers: they replace the old ones.
        let updated = policy.refreshed(cached, with: response(["Cache-Control": "max-age=120", "ETag": "\"b\""]), now: later)
        #expect(updated.etag == "\"b\"" && updated.expiresAt == later.addingTimeInterval(120) && updated.storedAt == later)
        // A bare 304: the same lifetime again, counted from now.
        let bare = policy.refreshed(cached, with: response([:]), now: later)
        #expect(bare.etag == "\"a\"" && bare.expiresAt == later.addingTimeInterval(60) && bare.isFresh(at: later))
        // no-cache stays no-cache.
        let noCache = try #require(policy.metadata(for: response(["Cache-Control": "no-cache"]), byteCount: 1, now: now))
        #expect(policy.refreshed(noCache, with: response([:]), now: later).requiresRevalidation)
    }
}
