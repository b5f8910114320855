import ArgumentParser

/// The `User-Agent` the command line sends: by default it names webimage and where to read about
/// it, as crawlers do (`Googlebot/2.1 (+http://www.google.com/bot.html)`); `--user-agent` replaces
/// it (best with a contact, e.g. `mybot/1.0 (+mailto:me@example.org)`). robots.txt groups and
/// `X-Robots-Tag` directives for `webimage` always apply, and so do those for the product token
/// of a `--user-agent` (`mybot`): a site that names either is obeyed (``robotsAgents(for:)``).
///
/// ```swift
/// try CLIUserAgent.validate("datasetbot/1.0 (+https://example.org/bot)")
/// ```
enum CLIUserAgent {
    static let version = "0.1"
    static let projectURL = "https://github.com/OWNER/WebImage"
    static let `default` = "webimage/\(version) (+\(projectURL))"

    /// The agent names robots.txt and `X-Robots-Tag` are read for: `webimage`, and the product
    /// token of `userAgent` (its first word up to `/`, lowercased) when it is another.
    static func robotsAgents(for userAgent: String?) -> [String] {
        let token = (userAgent ?? "").prefix { $0 != "/" && $0 != " " }.lowercased()
        return token.isEmpty || token == RobotsRules.agent ? [RobotsRules.agent] : [RobotsRules.agent, token]
    }

    /// A header value: 1–512 visible ASCII characters or spaces (no CR/LF to split the request).
    static func validate(_ value: String) throws {
        guard (1...512).contains(value.utf8.count), value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw ValidationError("--user-agent must be 1 to 512 printable ASCII characters")
        }
    }
}
