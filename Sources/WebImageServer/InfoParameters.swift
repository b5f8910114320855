import Foundation
import WebImage

/// What one `/info` request asks for: `url` (required, parsed as `/img` parses it) and `bh`, the
/// BlurHash components as `X:Y` (each 1–9; 4:3 when absent); `s` is the signature. Unknown or
/// repeated parameters are refused, as `/img` refuses them.
///
/// ```swift
/// let parameters = try InfoParameters(query: [("url", "https://example.com/a.jpg"), ("bh", "5:4")])
/// ```
struct InfoParameters: Sendable {
    var source: SourceURL
    var blurHashComponents: (x: Int, y: Int) = (4, 3)

    static let names: Set<String> = ["url", "bh", "s"]

    init(query: [(String, String)]) throws(ImageServerError) {
        let seen = try ImageParameters.values(query, names: Self.names)
        source = try ImageParameters.source(seen["url"])
        if let value = seen["bh"] {
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy({ $0.count == 1 && ("1"..."9").contains($0) }),
                  let x = Int(parts[0]), let y = Int(parts[1]) else {
                throw .badParameter("'bh' must be X:Y, each a whole number from 1 to 9")
            }
            blurHashComponents = (x, y)
        }
    }
}
