import Foundation
import WebImage

/// An image whose server asked, in `X-Robots-Tag`, that it not be collected: `noai`,
/// `noimageai`, `noindex` or `noimageindex` — img2dataset's default list — for every agent, or
/// for `webimage` or the product token of a `--user-agent` by name (`X-Robots-Tag: webimage:
/// noai`, ``CLIUserAgent/robotsAgents(for:)``). A directive for another agent (`otherbot:
/// noindex`) does not apply. `fetch` skips such an image, reports it as
/// `opted-out`, and removes what the pipeline cached of it, so a later run asks the server again.
///
/// ```swift
/// OptOut(DataResponse(url: url, statusCode: 200, headers: [HTTPField("X-Robots-Tag", "noai")]))  // opted out
/// ```
struct OptOut: Error, CustomStringConvertible {
    static let directives: Set<String> = ["noai", "noimageai", "noindex", "noimageindex"]
    static let agent = "webimage"
    /// The directives that applied, as the server wrote them (lowercased).
    var found: [String]

    /// `nil` when the response (if any) carries no applicable directive.
    init?(_ response: DataResponse?, agents: [String] = [agent]) {
        guard let response else { return nil }
        var found: [String] = []
        for field in response.headers where field.name.lowercased() == "x-robots-tag" {
            // One field is `[agent:] directive, directive, …`; an agent name ends with a colon.
            var value = Substring(field.value)
            if let colon = value.firstIndex(of: ":") {
                let agent = value[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                // `unavailable_after: DATE` is a directive with a value, not an agent.
                if agent != "unavailable_after" {
                    guard agents.contains(agent) else { continue }
                    value = value[value.index(after: colon)...]
                }
            }
            for part in value.split(separator: ",") {
                let directive = part.trimmingCharacters(in: .whitespaces).lowercased()
                if Self.directives.contains(directive) { found.append(directive) }
            }
        }
        guard !found.isEmpty else { return nil }
        self.found = found
    }

    var description: String { "the server opted this image out (X-Robots-Tag: \(found.joined(separator: ", ")))" }
}
