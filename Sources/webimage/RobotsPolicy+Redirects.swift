import Foundation
import WebImage

extension RobotsPolicy {
    /// The loader every hop is requested with: it returns redirects as they are, for a
    /// ``RedirectFollowingLoader`` to follow (robots.txt's own, RFC 9309's "at least five", and
    /// the images' with their checks). One connection pool for both.
    static let hopLoader = HTTPDataLoader(maxRedirects: 0)

    /// The images' loader of a polite run: every redirect's target is checked against robots.txt
    /// of its own origin before it is requested, as Scrapy does (wget does not) — a redirect to a
    /// path or host that disallows us is not asked for, and the line is `robots-disallowed`.
    /// The first URL is checked before the load, by ``FetchRun``.
    nonisolated func checkingRedirects() -> RedirectFollowingLoader {
        RedirectFollowingLoader(base: Self.hopLoader) { next in
            do {
                try await self.check(next)
            } catch var refusal as RobotsDisallowed {
                refusal.redirect = next
                throw refusal
            }
        }
    }
}
