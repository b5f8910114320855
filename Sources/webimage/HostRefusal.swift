import Foundation

/// A host whose `429` or `503` asked (`Retry-After`) for a longer wait than `fetch
/// --max-retry-after`: it is not asked again in this run. Its lines fail with this reason — the
/// line whose request was answered so, and every later line of the host without a request — so
/// that `--retry-failed` fetches them in a later run, after the wait the host asked for.
///
/// ```swift
/// let refusal = HostRefusal(host: "img.example.org", asked: 3600, limit: 300)
/// print(refusal.explaining(nil))  // not requested: img.example.org asked …
/// ```
struct HostRefusal: Sendable, Error, CustomStringConvertible {
    var host: String
    /// The wait the host asked for, in seconds.
    var asked: Double
    /// `--max-retry-after`, in seconds.
    var limit: Double

    var description: String {
        "\(host) asked (Retry-After) for no request in the next \(Self.seconds(asked)), longer than --max-retry-after \(Self.seconds(limit)):"
            + " its lines are not requested again in this run (--retry-failed fetches them later)"
    }

    /// The failure of one of the host's lines: `error` is the line's own (its 429 or 503), `nil`
    /// for a line not requested at all.
    func explaining(_ error: (any Error)?) -> LineError {
        LineError(description: (error.map { "\($0); " } ?? "not requested: ") + description)
    }

    /// A line's failure, as its record says it.
    struct LineError: Error, CustomStringConvertible {
        var description: String
    }

    private static func seconds(_ value: Double) -> String {
        value >= 1e15 ? "\(value) s" : "\(Int64(value.rounded(.up))) s"
    }
}
