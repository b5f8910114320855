import Foundation
import Hummingbird
import WebImage

/// The origin's image routes.
///
/// `GET /images/{name}` serves a stored image with `Content-Type`, `ETag`, `Last-Modified`,
/// `Cache-Control` and `Accept-Ranges`; answers `If-None-Match` with 304 and `Range: bytes=N-`
/// (with a matching `If-Range`, if sent) with 206. Query parameters make it misbehave:
/// - `status=N` answers N with a short text body instead; `delay=MS` waits before answering;
/// - `corrupt=1` sends garbage of the same length under the image's content type;
/// - `truncate=N` declares the full length, sends N bytes, then drops the connection;
/// - `lie=N` declares N bytes more than it sends, then stalls (the client must time out);
/// - `type=T` overrides the `Content-Type`; `norange=1` ignores `Range`;
/// - `chunk=N` and `stall=MS` stream the body N bytes at a time, pausing MS between chunks
///   (`length=0` also leaves `Content-Length` out: a body of unknown length).
///
/// More routes (auth, cookies, redirects, look-ups, flaky servers, big bodies): ``BehaviourRoutes``;
/// arbitrary header values: ``HeaderRoutes``, and
/// an image per identity: ``IdentityRoutes``; `/robots.txt`: ``RobotsRoutes``.
enum OriginRoutes {
    static func router(files: FileStore, log: RequestLog, robots: RobotsSetting = RobotsSetting()) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: CountingMiddleware(counts: log))
        router.get("/images/{name}") { request, context in
            try await serve(try context.parameters.require("name"), request: request, files: files, log: log)
        }
        router.get("/status/{code}") { _, context in
            let code = try context.parameters.require("code", as: Int.self)
            return text("status \(code)\n", status: .init(code: code))
        }
        router.get("/text") { _, _ in text("this is not an image\n") }
        BehaviourRoutes.add(to: router, files: files, log: log)
        CacheRoutes.add(to: router, files: files)
        HeaderRoutes.add(to: router, files: files)
        IdentityRoutes.add(to: router)
        RobotsRoutes.add(to: router, setting: robots)
        return router
    }

    static func serve(_ name: String, request: Request, files: FileStore, log: RequestLog) async throws -> Response {
        let query = request.uri.queryParameters
        if let delay = query.get("delay", as: Int.self) { try await Task.sleep(for: .milliseconds(delay)) }
        if let status = query.get("status", as: Int.self) { return text("status \(status)\n", status: .init(code: status)) }
        guard let file = files[name] else { return text("no image \(name)\n", status: .notFound) }
        var headers = HTTPFields()
        headers[.contentType] = query.get("type") ?? ImageFormat(sniffing: file.data)?.mimeType ?? "application/octet-stream"
        headers[.eTag] = file.etag
        headers[.lastModified] = "Sat, 01 Nov 2025 00:00:00 GMT"
        headers[.cacheControl] = "public, max-age=3600"
        headers[.acceptRanges] = "bytes"
        if request.headers[.ifNoneMatch] == file.etag { return Response(status: .notModified, headers: headers) }
        var body = file.data
        if query.get("corrupt") == "1" { body = Data((0..<body.count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }
        var status = HTTPResponse.Status.ok
        if query.get("norange") != "1", let range = request.headers[.range], range.hasPrefix("bytes="),
           let start = Int(range.dropFirst(6).prefix { $0.isNumber }), start < body.count,
           request.headers[.ifRange].map({ $0 == file.etag }) ?? true {
            headers[.contentRange] = "bytes \(start)-\(body.count - 1)/\(body.count)"
            body = body.subdata(in: start..<body.count)
            status = .partialContent
        }
        headers[.contentLength] = "\(body.count)"
        let path = request.uri.path
        if let cut = query.get("truncate", as: Int.self) {
            let partial = body.prefix(max(0, min(cut, body.count)))
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: body.count) { writer in
                try await writer.write(ByteBuffer(bytes: partial))
                throw OriginFault.connectionDropped
            })
        }
        if let extra = query.get("lie", as: Int.self) {
            let payload = body
            headers[.contentLength] = "\(body.count + extra)"
            return Response(status: status, headers: headers, body: ResponseBody(contentLength: body.count + extra) { writer in
                try await writer.write(ByteBuffer(bytes: payload))
                try await Task.sleep(for: .seconds(30))
                throw OriginFault.connectionDropped
            })
        }
        if let chunk = query.get("chunk", as: Int.self), chunk > 0 {
            let declare = query.get("length") != "0"
            if !declare { headers[.contentLength] = nil }
            return Response(status: status, headers: headers, body: streamed(
                body, chunk: chunk, stall: query.get("stall", as: Int.self) ?? 0, path: path, log: log, declareLength: declare))
        }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A body written `chunk` bytes at a time; a write that fails (the client went away) is
    /// counted as an aborted body.
    static func streamed(_ payload: Data, chunk: Int, stall: Int, path: String, log: RequestLog, declareLength: Bool = true) -> ResponseBody {
        ResponseBody(contentLength: declareLength ? payload.count : nil) { writer in
            var offset = 0
            do {
                while offset < payload.count {
                    let end = min(offset + chunk, payload.count)
                    try await writer.write(ByteBuffer(bytes: payload[offset..<end]))
                    log.sent(end - offset, path: path)
                    offset = end
                    if stall > 0 && offset < payload.count { try await Task.sleep(for: .milliseconds(stall)) }
                }
                try await writer.finish(nil)
            } catch {
                log.abort(path: path)
                throw error
            }
        }
    }

    static func text(_ body: String, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.contentType] = "text/plain"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

enum OriginFault: Error { case connectionDropped }
