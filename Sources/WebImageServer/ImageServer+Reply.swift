public import NIOCore
import Hummingbird

/// One answer of the image server in plain values, for an HTTP server other than Hummingbird
/// (``ImageServer/reply(route:uri:headers:peer:)``): the status, the header fields in order, and
/// the body's bytes.
public struct ImageServerReply: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: ByteBuffer
}

extension ImageServer {
    /// The routes ``addRoutes(to:)`` adds, each answered by `GET` alone.
    public static let routeNames = ["img", "info", "health", "ready", "metrics"]

    /// Answers a `GET` of one of ``routeNames`` received by another HTTP server — Vapor's
    /// (`WebImageVapor`), or one of your own: `uri` is the request's target as received (path
    /// and query: a signature covers it), `headers` its fields (`Accept`, `If-None-Match`), and
    /// `peer` the client's address (for `--max-renders-per-client`).
    ///
    /// The limits, caches, deadlines and errors are the same as through ``addRoutes(to:)``. What
    /// only Hummingbird's connection handlers give is missing: a client that leaves is not seen,
    /// so its render runs to its end or its deadline, and connection limits are the host
    /// server's to set.
    ///
    /// ```swift
    /// let reply = await images.reply(route: "img", uri: "/img?url=https%3A%2F%2Fexample.com%2Fa.jpg&w=200",
    ///                                headers: [("Accept", "image/webp")], peer: nil)
    /// print(reply.status, reply.body.readableBytes)
    /// ```
    public func reply(route: String, uri: String, headers: [(name: String, value: String)], peer: SocketAddress?) async -> ImageServerReply {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPFields.Element.Name(name) { fields.append(HTTPFields.Element(name: name, value: value)) }
        }
        let request = Request(head: HTTPRequest(method: .get, scheme: nil, authority: nil, path: uri, headerFields: fields), body: RequestBody(buffer: ByteBuffer()))
        let response = await respond(route: route, request, client: RequestClient(peer: peer))
        let collected = BodyCollector.Box()
        // Every answer of this server is one buffer in memory: writing it cannot fail.
        try? await response.body.write(BodyCollector(box: collected))
        return ImageServerReply(
            status: Int(response.status.code),
            headers: response.headers.map { ($0.name.rawName, $0.value) },
            body: collected.buffer)
    }

    /// The answer to `GET route` (one of ``routeNames``; 404 otherwise): what both
    /// ``addRoutes(to:)`` and ``reply(route:uri:headers:peer:)`` call.
    func respond(route: String, _ request: Request, client: RequestClient) async -> Response {
        switch route {
        case "img": await image(request, client: client)
        case "info": await info(request, client: client)
        case "health": Self.text("ok\n", status: .ok)
        case "ready": isReady ? Self.text("ready\n", status: .ok) : Self.text("busy\n", status: .serviceUnavailable)
        case "metrics": metricsResponse()
        default: errorResponse(ImageServerError(status: 404, code: "not_found", message: "no route \(route)"))
        }
    }
}

/// Gathers a response's body into one buffer (in one task: the box is not shared).
private struct BodyCollector: ResponseBodyWriter {
    final class Box {
        var buffer = ByteBuffer()
    }
    let box: Box

    mutating func write(_ buffer: ByteBuffer) async throws {
        var part = buffer
        box.buffer.writeBuffer(&part)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
