import ArgumentParser
import Foundation
import WebImageServer

/// `webimage sign`: prints a signed `/img` path for `webimage serve --key`.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print a signed /img path for a source URL (or sign a path that starts with /).",
        discussion: """
            webimage sign https://example.com/a.jpg --key SECRET --width 256 prints \
            /img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=256&s=SIGNATURE. The signature is the unpadded \
            base64url HMAC-SHA256 of the path and query before &s=. The key may come from WEBIMAGE_KEY \
            (the first of a comma-separated list).
            """)

    @Argument(help: "The source URL, or a path and query starting with / to sign as it is.") var url: String
    @Option(help: "The signing key (else WEBIMAGE_KEY).") var key: String?
    @Option(name: [.customLong("width"), .customShort("w")], help: "w: the width.") var width: Int?
    @Option(name: .customLong("height"), help: "h: the height.") var height: Int?
    @Option(help: "fit: inside, cover or fill.") var fit: String?
    @Option(help: "format: auto, jpeg, png, webp, avif or gif.") var format: String?
    @Option(name: [.customLong("quality"), .customShort("q")], help: "q: 1-100.") var quality: Int?
    @Option(help: "process: a processing spec (as fetch --process).") var process: String?
    @Option(help: "The path the routes are mounted at.") var prefix = "/img"

    func run() throws {
        let environmentKey = ProcessInfo.processInfo.environment["WEBIMAGE_KEY"]?.split(separator: ",").first.map(String.init)
        guard let key = key ?? environmentKey, !key.isEmpty else { throw CLIError("give --key (or set WEBIMAGE_KEY)") }
        print(URLSigner(keys: [Data(key.utf8)]).sign(path))
    }

    var path: String {
        if url.hasPrefix("/") { return url }
        var query = "url=" + Self.encode(url)
        if let width { query += "&w=\(width)" }
        if let height { query += "&h=\(height)" }
        if let fit { query += "&fit=" + Self.encode(fit) }
        if let format { query += "&format=" + Self.encode(format) }
        if let quality { query += "&q=\(quality)" }
        if let process { query += "&process=" + Self.encode(process) }
        return prefix + "?" + query
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? value
    }
}
