#if Vapor
public import Vapor
public import WebImageServer

extension ImageServer {
    /// Adds `GET img`, `info`, `health`, `ready` and `metrics` to a Vapor 4 app or route group:
    /// the same answers, limits, caches and signatures as `webimage serve`'s routes.
    ///
    /// Vapor does not tell a route when its client leaves, so a render whose client has gone runs
    /// to its end or its deadline (under `webimage serve` it stops at once), and connection
    /// limits (header size and time, idle time, connections per client) are Vapor's to set.
    ///
    /// ```swift
    /// let app = try await Application.make()
    /// let images = try ImageServer(configuration: ImageServerConfiguration())
    /// images.addRoutes(to: app.grouped("images"))   // GET /images/img?url=…&w=200
    /// try await app.execute()
    /// ```
    public func addRoutes(to routes: some RoutesBuilder) {
        for route in Self.routeNames {
            routes.on(.GET, PathComponent(stringLiteral: route)) { request async -> Response in
                await self.vaporReply(route: route, to: request)
            }
        }
    }

    private func vaporReply(route: String, to request: Request) async -> Response {
        let reply = await reply(
            route: route, uri: request.url.string, headers: request.headers.map { ($0.name, $0.value) },
            peer: request.remoteAddress)
        var headers = HTTPHeaders()
        // Vapor writes the body's length itself.
        for (name, value) in reply.headers where name.lowercased() != "content-length" { headers.add(name: name, value: value) }
        return Response(status: HTTPResponseStatus(statusCode: reply.status), headers: headers, body: .init(buffer: reply.body))
    }
}
#endif
