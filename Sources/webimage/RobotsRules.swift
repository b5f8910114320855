import Foundation

/// The rules of one robots.txt (RFC 9309) that apply to `webimage` (and to the product token of
/// a `--user-agent`, ``CLIUserAgent/robotsAgents(for:)``): the groups naming one of those agents,
/// combined, else the `*` groups, else none (everything allowed). The longest matching `Allow` or `Disallow`
/// pattern decides; on a tie `Allow` wins; `*` matches any run of bytes and a final `$` anchors
/// the pattern at the end of the path. Both sides are compared as ``RobotsPath`` normalizes them.
/// `/robots.txt` itself is always allowed.
///
/// Bounded for a hostile file: the caller passes at most ``RobotsPolicy/maxBytes``; patterns
/// longer than ``maxPatternBytes`` are ignored and at most ``maxRules`` rules are kept. Matching
/// one path costs O(path × rules + pattern bytes) (each `*`-free piece is found with KMP, never
/// by backtracking), and a path whose check would cost more than ``maxMatchCost`` is disallowed
/// unmatched.
///
/// ```swift
/// let rules = RobotsRules(Data("User-agent: *\nDisallow: /private/\n".utf8))
/// rules.allows(path: "/private/a.jpg")  // false
/// ```
struct RobotsRules: Sendable {
    static let agent = "webimage"
    static let maxPatternBytes = 2048
    static let maxRules = 4000
    /// The most byte comparisons one path's check may cost (16 M, about 10 ms): rules × path
    /// bytes. A check that would cost more (thousands of rules against a path of tens of
    /// kilobytes, which a hostile host's robots.txt and URLs can combine) is answered
    /// *disallowed* without matching: the cautious answer, as for a robots.txt that cannot be read.
    static let maxMatchCost = 16 << 20

    struct Rule: Sendable {
        var allow: Bool
        var pattern: RobotsPattern
    }

    private(set) var rules: [Rule] = []
    /// Bytes the rules keep.
    var byteCount: Int { rules.reduce(64) { $0 + $1.pattern.byteCount + 16 } }
    /// Why robots.txt could not be read (5xx, 429, network): then nothing is allowed.
    private(set) var unreachable: String?

    /// Everything allowed (a 4xx robots.txt).
    static let allowAll = RobotsRules(rules: [])

    /// Nothing allowed: robots.txt could not be read, for `reason`.
    static func unreadable(_ reason: String) -> RobotsRules {
        var rules = RobotsRules(rules: [])
        rules.unreachable = reason
        return rules
    }

    private init(rules: [Rule]) { self.rules = rules }

    init(_ body: Data, agents: [String] = [agent]) {
        var ours: [Rule] = [], everyone: [Rule] = []
        var namesUs = false, namesEveryone = false, inAgents = false
        var sawOurs = false
        for line in Self.lines(body) {
            guard let pair = Self.keyValue(line) else { continue }
            let (key, value) = pair
            switch key {
            case "user-agent":
                if !inAgents { namesUs = false; namesEveryone = false }
                inAgents = true
                let token = value.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: " ") }
                let name = String(decoding: token, as: UTF8.self).lowercased()
                if agents.contains(name) { namesUs = true; sawOurs = true }
                if name == "*" { namesEveryone = true }
            case "allow", "disallow":
                inAgents = false
                // An empty Disallow allows everything: no rule.
                guard namesUs || namesEveryone, !value.isEmpty, value.count <= Self.maxPatternBytes,
                      let pattern = RobotsPattern(RobotsPath.normalize(value)) else { continue }
                let rule = Rule(allow: key == "allow", pattern: pattern)
                if namesUs, ours.count < Self.maxRules { ours.append(rule) }
                if namesEveryone, everyone.count < Self.maxRules { everyone.append(rule) }
            default:
                // Sitemap, Crawl-delay and the like end no group (RFC 9309 §2.2.4).
                continue
            }
        }
        rules = sawOurs ? ours : everyone
    }

    /// Whether `path` (percent-encoded path and query, as sent) may be fetched.
    func allows(path: String) -> Bool {
        if unreachable != nil { return false }
        if path == "/robots.txt" { return true }
        let bytes = RobotsPath.normalize(Array(path.utf8))
        let (cost, overflow) = rules.count.multipliedReportingOverflow(by: bytes.count + 1)
        if overflow || cost > Self.maxMatchCost { return false }
        var best: (length: Int, allow: Bool)?
        for rule in rules where rule.pattern.matches(bytes) {
            let length = rule.pattern.length
            if best == nil || length > best!.length || (length == best!.length && rule.allow) { best = (length, rule.allow) }
        }
        return best?.allow ?? true
    }

    /// Lines split at CR or LF, comments removed.
    private static func lines(_ body: Data) -> [ArraySlice<UInt8>] {
        Array(body).split(whereSeparator: { $0 == 0x0A || $0 == 0x0D }).map { line in
            line.firstIndex(of: UInt8(ascii: "#")).map { line[..<$0] } ?? line
        }
    }

    /// `key: value` with the key lowercased and both trimmed of spaces and tabs.
    private static func keyValue(_ line: ArraySlice<UInt8>) -> (String, [UInt8])? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon - line.startIndex <= 32 else { return nil }
        let key = String(decoding: trim(line[..<colon]), as: UTF8.self).lowercased()
        return (key, Array(trim(line[(colon + 1)...])))
    }

    private static func trim(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !blank($0) }), let last = bytes.lastIndex(where: { !blank($0) }) else { return [] }
        return bytes[first...last]
    }
}
