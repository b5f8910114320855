import Foundation
import Hummingbird
import WebImage

/// One request as the origin saw it.
public struct LoggedRequest: Sendable {
    /// Arrival order, from 1.
    public var index: Int
    public var path: String
    public var query: String?
    /// Request headers the tests look at: Range, If-Range, If-None-Match, If-Modified-Since,
    /// Authorization, Cookie, Accept, User-Agent, and Host (the request's authority) (lower-cased names).
    public var headers: [String: String]
    /// The status answered (0 while the handler runs).
    public var status: Int
    /// When the request arrived (the origin's clock: gaps between arrivals are what a client's
    /// backoff looked like from the server).
    public var arrivedAt: ContinuousClock.Instant
}

/// What the origin served: requests in arrival order, in-flight peaks, aborted bodies.
///
/// It keeps the last ``capacity`` requests: a long-running `webimage origin` (a million-URL
/// measurement) grew by about 700 MB when every request was kept. Counts by path and
/// ``totalCount`` still cover every request since the last reset.
final class RequestLog: Sendable {
    /// The requests kept; past it the older half is dropped.
    static let capacity = 100_000

    private struct State {
        var entries: [LoggedRequest] = []
        /// Entries dropped from the front since the last reset.
        var dropped = 0
        var counts: [String: Int] = [:]
        var inFlight = 0
        var maxInFlight = 0
        var aborted: [String: Int] = [:]
        var bytesSent: [String: Int] = [:]
        /// Requests ever seen: a request's serial number survives a `reset()`, its entry does not.
        var serial = 0
        /// `serial` at the last reset: entries hold the requests after it.
        var base = 0
    }

    private let state = Locked(State())

    /// Logs an arriving request; returns its serial number for ``answered(_:status:)``.
    func arrive(path: String, query: String?, headers: [String: String]) -> Int {
        state.withLock { state in
            state.serial += 1
            state.counts[path, default: 0] += 1
            if state.entries.count >= Self.capacity {
                let half = Self.capacity / 2
                state.entries.removeFirst(half)
                state.dropped += half
            }
            state.entries.append(LoggedRequest(
                index: state.serial - state.base, path: path, query: query, headers: headers, status: 0, arrivedAt: .now))
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
            return state.serial
        }
    }

    func answered(_ serial: Int, status: Int) {
        state.withLock { state in
            state.inFlight -= 1
            // A request that arrived before a reset, or whose entry was dropped, has none.
            let index = serial - state.base - 1 - state.dropped
            guard serial > state.base, index >= 0, index < state.entries.count else { return }
            state.entries[index].status = status
        }
    }

    func sent(_ bytes: Int, path: String) { state.withLock { $0.bytesSent[path, default: 0] += bytes } }
    func abort(path: String) { state.withLock { $0.aborted[path, default: 0] += 1 } }

    var entries: [LoggedRequest] { state.withLock { $0.entries } }
    var maxInFlight: Int { state.withLock { $0.maxInFlight } }
    func count(_ path: String) -> Int { state.withLock { $0.counts[path] ?? 0 } }
    /// Requests since the last reset, including those whose entries were dropped.
    var totalCount: Int { state.withLock { $0.serial - $0.base } }
    func aborted(_ path: String) -> Int { state.withLock { $0.aborted[path] ?? 0 } }
    func bytesSent(_ path: String) -> Int { state.withLock { $0.bytesSent[path] ?? 0 } }
    /// Forgets what was served; requests still in flight stay counted as in flight.
    func reset() {
        state.withLock { state in
            state = State(inFlight: state.inFlight, maxInFlight: state.inFlight, serial: state.serial, base: state.serial)
        }
    }
}

/// Logs every request on arrival and its status when the handler returns.
struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    static var logged: [String] { ["range", "if-range", "if-none-match", "if-modified-since", "authorization", "cookie", "accept", "user-agent", "traceparent"] }
    let counts: RequestLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var headers: [String: String] = [:]
        for field in request.headers where Self.logged.contains(field.name.canonicalName) {
            headers[field.name.canonicalName] = field.value
        }
        if let authority = request.head.authority { headers["host"] = authority }
        let index = counts.arrive(path: request.uri.path, query: request.uri.query, headers: headers)
        do {
            let response = try await next(request, context)
            counts.answered(index, status: Int(response.status.code))
            return response
        } catch {
            counts.answered(index, status: 500)
            throw error
        }
    }
}
