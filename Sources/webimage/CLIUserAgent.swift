import ArgumentParser

/// The `User-Agent` the command line sends: by default it names webimage and where to read about
/// it, as crawlers do (`Googlebot/2.1 (+http://www.google.com/bot.html)`); `--user-agent` replaces
/// it (best with a contact, e.g. `mybot/1.0 (+mailto:me@example.org)`). robots.txt is matched
/// for the token `webimage` whatever the header says.
///
/// ```swift
/// try CLIUserAgent.validate("datasetbot/1.0 (+https://example.org/bot)")
/// ```
enum CLIUserAgent {
    static let version = "0.1"
    static let projectURL = "https://github.com/OWNER/WebImage"
    static let `default` = "webimage/\(version) (+\(projectURL))"

    /// A header value: 1–512 visible ASCII characters or spaces (no CR/LF to split the request).
    static func validate(_ value: String) throws {
        guard (1...512).contains(value.utf8.count), value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw ValidationError("--user-agent must be 1 to 512 printable ASCII characters")
        }
    }
}
