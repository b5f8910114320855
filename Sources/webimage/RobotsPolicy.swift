import Foundation
import WebImage

/// robots.txt for one `fetch` run: fetched once per origin (scheme, host and port) the first
/// time a URL of it comes up, kept for the run, shared by every request to that origin (the
/// first asks, the others wait for its answer).
///
/// What the answer means (RFC 9309 §2.3.1): a 2xx body is parsed (its first ``maxBytes``); a
/// 4xx — or more than the loader's redirects — means there is none, everything is allowed;
/// a 5xx, a 429, a timeout or an unreachable host means everything is disallowed for the run
/// (``RobotsUnreachable``, recorded as a failure).
///
/// ```swift
/// let robots = RobotsPolicy(loader: pipeline.configuration.downloader.loader, headers: headers, timeout: .seconds(15))
/// try await robots.check(url)  // RobotsDisallowed, RobotsUnreachable
/// ```
actor RobotsPolicy {
    /// RFC 9309 asks for at least 500 KiB to be parsed; the rest of a larger file is not read.
    static let maxBytes = 512 * 1024

    private let loader: any DataLoading
    private let headers: [HTTPField]
    private let timeout: Duration
    /// The agents whose groups apply (``CLIUserAgent/robotsAgents(for:)``).
    private let agents: [String]
    /// The rules of the origins met so far, with when each was last used and what it keeps
    /// (once read); the least recently used are dropped past ``maxKeptBytes`` or
    /// ``maxKeptOrigins`` and read again if met again. Kept for the whole run, a hostile list
    /// of 100 origins each serving 512 KB of rules took 2.7 GB (red team, stop 53).
    private var origins: [String: (task: Task<RobotsRules, Never>, used: UInt64, bytes: Int)] = [:]
    private var uses: UInt64 = 0
    private var keptBytes = 0
    static let maxKeptBytes = 32 << 20
    static let maxKeptOrigins = 4096

    init(loader: any DataLoading, headers: [HTTPField], timeout: Duration, agents: [String] = [RobotsRules.agent]) {
        self.loader = loader
        self.headers = headers
        self.timeout = timeout
        self.agents = agents
    }

    /// Throws ``RobotsDisallowed`` when robots.txt of `url`'s origin disallows `url` for
    /// our agents, ``RobotsUnreachable`` when it could not be read.
    /// The matching runs in the caller's task, not on this actor: a host whose rules are costly
    /// to match does not hold up the checks of every other host.
    nonisolated func check(_ url: URL) async throws {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return }
        let rules = await rules(for: "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? ""))
        var path = url.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let query = url.query(percentEncoded: true) { path += "?" + query }
        if let reason = rules.unreachable { throw RobotsUnreachable(reason: reason) }
        guard rules.allows(path: path) else { throw RobotsDisallowed() }
    }

    /// The rules of `origin`, fetched by the first caller; the others wait for its answer.
    private func rules(for origin: String) async -> RobotsRules {
        uses += 1
        if let known = origins[origin] {
            origins[origin]?.used = uses
            return await known.task.value
        }
        let (loader, headers, timeout, agents) = (loader, headers, timeout, agents)
        let task = Task { await Self.load(URL(string: origin + "/robots.txt"), loader: loader, headers: headers, timeout: timeout, agents: agents) }
        origins[origin] = (task, uses, 0)
        let rules = await task.value
        if origins[origin]?.task == task, origins[origin]?.bytes == 0 {
            origins[origin]?.bytes = rules.byteCount
            keptBytes += rules.byteCount
            evict(keeping: origin)
        }
        return rules
    }

    /// Drops the least recently used origins (never `origin`) until what is kept is within bounds.
    private func evict(keeping origin: String) {
        while keptBytes > Self.maxKeptBytes || origins.count > Self.maxKeptOrigins {
            guard let oldest = origins.filter({ $0.key != origin }).min(by: { $0.value.used < $1.value.used }) else { return }
            keptBytes -= oldest.value.bytes
            origins[oldest.key] = nil
        }
    }

    private static func load(_ url: URL?, loader: any DataLoading, headers: [HTTPField], timeout: Duration, agents: [String]) async -> RobotsRules {
        guard let url else { return .allowAll }
        do {
            let transfer = try await loader.loadData(for: DataRequest(url: url, headers: headers, timeout: timeout, maxBodySize: maxBytes))
            switch transfer.response.statusCode {
            case 200..<300:
                return RobotsRules(try await readBody(transfer.body, within: timeout), agents: agents)
            case 429: return .unreadable("HTTP 429")
            case 300..<500: return .allowAll
            case let status: return .unreadable("HTTP \(status)")
            }
        } catch ImageDownloadError.tooManyRedirects {
            return .allowAll
        } catch {
            return .unreadable("\(error)")
        }
    }
}

extension RobotsPolicy {
    /// The first ``maxBytes`` of `body`, read within `timeout` (a server that drips bytes
    /// forever is cut off); dropping the rest closes the connection.
    fileprivate static func readBody(_ body: DataBody, within timeout: Duration) async throws -> Data {
        try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                var data = Data()
                for try await chunk in body {
                    data.append(chunk.prefix(maxBytes - data.count))
                    if data.count >= maxBytes {
                        // A line cut in two could read as another rule: only whole lines count.
                        guard let end = data.lastIndex(where: { $0 == 0x0A || $0 == 0x0D }) else { return Data() }
                        return Data(data[data.startIndex...end])
                    }
                }
                return data
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let data = first else { throw ImageDownloadError.timedOut }
            return data
        }
    }
}

/// robots.txt of the URL's origin could not be read (5xx, 429, timeout, network): RFC 9309
/// says to assume a complete disallow, so the URL is not fetched; it is recorded as `failed`
/// (the host is down or refusing, and `--retry-failed` tries it again later).
/// Permanent for the run (the answer is kept): a load is not retried for it.
struct RobotsUnreachable: Error, PermanentlyFailing, CustomStringConvertible {
    var reason: String
    var description: String { "not fetched: robots.txt of this host could not be read (\(reason))" }
}

/// A URL robots.txt disallows for `webimage`: not fetched, recorded as `robots-disallowed`.
/// `redirect`: the URL was a redirect's target (``RobotsPolicy/checkingRedirects()``).
struct RobotsDisallowed: Error, PermanentlyFailing, CustomStringConvertible {
    var redirect: URL?
    var description: String {
        if let redirect { return "a redirect leads to \(redirect.absoluteString), which robots.txt of its host disallows for webimage" }
        return "robots.txt of this host disallows it for webimage"
    }
}
