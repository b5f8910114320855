import Foundation

/// Numbers and dates read from HTTP header values, range-checked: whatever a server sends, the
/// result is a value in range, `nil` ("absent or unusable"), or ``Invalid`` — never a trap.
///
/// Every header number the library reads goes through here (`Content-Length`, `Content-Range`,
/// `Retry-After`, `Age`, `Cache-Control` seconds, `Expires`, `Date`, cookie `Max-Age`).
/// Integers are ASCII digits only (no sign, exponent, `inf` or `nan`, as the RFCs' grammars
/// say); a value past what an `Int` holds saturates at `Int.max` instead of overflowing, so a
/// size limit or a clamp decides what it means. Dates are limited to years 1601–9999.
package enum HTTPHeaderValue {
    /// The most seconds a delta-seconds value means (RFC 9111 § 1.2.2: a larger value, or a
    /// calculation that overflows, is taken as 2^31).
    static let deltaSecondsLimit = 2_147_483_648

    /// A header whose value cannot be used: the response is refused with this.
    struct Invalid: Error, Equatable, CustomStringConvertible {
        var name: String
        var value: String
        var description: String { "invalid \(name) header '\(value.prefix(64))'" }
        var downloadError: ImageDownloadError { .invalidHeader(name: name, value: value) }
    }

    /// `1*DIGIT` between optional whitespace, saturating at `Int.max`; `nil` for anything else.
    static func integer<S: StringProtocol>(_ text: S) -> Int? {
        let all = Array(text.utf8)
        guard let start = all.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
              let end = all.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return nil }
        let bytes = all[start...end]
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
            if overflow1 || overflow2 { value = .max } else { value = sum }
        }
        return value
    }

    /// A delta-seconds value (`Age`, `max-age`, `Retry-After`): digits only, at most 2^31.
    static func deltaSeconds<S: StringProtocol>(_ text: S) -> Int? {
        integer(text).map { min($0, deltaSecondsLimit) }
    }

    /// An HTTP date between the years 1601 and 9999, else `nil`.
    static func date(_ text: String) -> Date? {
        guard text.utf8.count <= 64, let date = HTTPDate.parse(text) else { return nil }
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds >= -11_644_473_600, seconds < 253_402_300_800 else { return nil }
        return date
    }

    /// The body length a response declares: every `Content-Length` field and list member must
    /// be the same number (RFC 9110 § 8.6); `nil` when there is none.
    static func contentLength(_ response: DataResponse) throws(Invalid) -> Int? {
        var found: Int?
        for field in response.headers where DataResponse.namesMatch(field.name, "Content-Length") {
            for member in field.value.split(separator: ",", omittingEmptySubsequences: false) {
                guard let length = integer(member), found == nil || found == length else {
                    throw Invalid(name: "Content-Length", value: field.value)
                }
                found = length
            }
        }
        return found
    }

    /// `Content-Range: bytes FIRST-LAST/COMPLETE` (or `/*`) of a `206`.
    struct ContentRange: Equatable {
        var first: Int
        var last: Int
        var complete: Int?
        /// The bytes the range holds.
        var count: Int { last - first + 1 }
    }

    /// The range of a `206`, checked: `FIRST <= LAST < COMPLETE`, all below `Int.max`.
    static func contentRange(_ response: DataResponse) throws(Invalid) -> ContentRange {
        let value = response.value(forHeader: "Content-Range") ?? ""
        let invalid = Invalid(name: "Content-Range", value: value)
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { throw invalid }
        let spec = trimmed.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bounds = halves[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2, bounds.count == 2, let first = integer(bounds[0]), let last = integer(bounds[1]),
              first <= last, last < .max
        else { throw invalid }
        var complete: Int?
        if halves[1].trimmingCharacters(in: .whitespaces) != "*" {
            guard let total = integer(halves[1]), last < total, total < .max else { throw invalid }
            complete = total
        }
        return ContentRange(first: first, last: last, complete: complete)
    }

    /// ``retryAfter(_:now:limit:)`` from now, for the command line's host back-off.
    package static func retryAfterDelay(_ text: String, limit: Duration) -> Duration? { retryAfter(text, limit: limit) }

    /// How many seconds `Retry-After` (delay-seconds or an HTTP date) asks to wait, uncapped (a
    /// huge value stays huge, as a Double); `nil` when the value is neither.
    package static func retryAfterSeconds(_ text: String) -> Double? { retryAfterSeconds(text, now: .now) }

    static func retryAfterSeconds(_ text: String, now: Date) -> Double? {
        if let delta = deltaSeconds(text) { return Double(delta) }
        if let date = date(text) { return max(0, date.timeIntervalSince(now)) }
        return nil
    }

    /// How long `Retry-After` (delay-seconds or an HTTP date) asks to wait, at most `limit`;
    /// `nil` when the value is neither.
    static func retryAfter(_ text: String, now: Date = .now, limit: Duration) -> Duration? {
        guard let seconds = retryAfterSeconds(text, now: now) else { return nil }
        let cap = max(0, limit.seconds)
        // Compared as Doubles first: the conversion to a Duration only sees a value in range.
        return seconds >= cap ? limit : .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
