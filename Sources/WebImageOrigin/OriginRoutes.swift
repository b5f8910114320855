import Foundation
import Hummingbird
import WebImage

/// The origin's routes.
///
/// - `GET /images/{name}` serves a stored image with `Content-Type`, `ETag`, `Last-Modified`
///   and `Cache-Control`, and answers `If-None-Match` with 304. Query parameters change it:
///   - `status=N` answers N with a short text body instead;
///   - `delay=MS` waits before answering;
///   - `corrupt=1` sends garbage of the same length under the image's content type;
///   - `truncate=N` declares the full length, sends N bytes, then drops the connection;
///   - `type=T` overrides the `Content-Type`;
///   - `chunk=N` and `stall=MS` stream the body N bytes at a time, pausing MS between chunks.
/// - `GET /status/{code}` answers that status.
/// - `GET /text` answers a plain-text body.
enum OriginRoutes {
    static func router(files: FileStore, counts: RequestCounts) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: CountingMiddleware(counts: counts))
        router.get("/images/{name}") { request, context in
            let name = try context.parameters.require("name")
            let query = request.uri.queryParameters
            if let delay = query.get("delay", as: Int.self) { try await Task.sleep(for: .milliseconds(delay)) }
            if let status = query.get("status", as: Int.self) {
                return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(string: "status \(status)\n")))
            }
            guard let file = files[name] else {
                return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "no image \(name)\n")))
            }
            var headers = HTTPFields()
            let format = ImageFormat(sniffing: file.data)
            headers[.contentType] = query.get("type") ?? format?.mimeType ?? "application/octet-stream"
            headers[.eTag] = file.etag
            headers[.lastModified] = "Sat, 01 Nov 2025 00:00:00 GMT"
            headers[.cacheControl] = "public, max-age=3600"
            headers[.acceptRanges] = "bytes"
            if request.headers[.ifNoneMatch] == file.etag {
                return Response(status: .notModified, headers: headers)
            }
            var body = file.data
            if query.get("corrupt") == "1" {
                body = Data((0..<body.count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            }
            headers[.contentLength] = "\(body.count)"
            if let cut = query.get("truncate", as: Int.self) {
                let partial = body.prefix(max(0, min(cut, body.count)))
                return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: body.count) { writer in
                    try await writer.write(ByteBuffer(bytes: partial))
                    throw OriginFault.connectionDropped
                })
            }
            if let chunk = query.get("chunk", as: Int.self), chunk > 0 {
                let stall = query.get("stall", as: Int.self) ?? 0
                let payload = body
                return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: payload.count) { writer in
                    var offset = 0
                    while offset < payload.count {
                        let end = min(offset + chunk, payload.count)
                        try await writer.write(ByteBuffer(bytes: payload[offset..<end]))
                        offset = end
                        if stall > 0 && offset < payload.count { try await Task.sleep(for: .milliseconds(stall)) }
                    }
                    try await writer.finish(nil)
                })
            }
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("/status/{code}") { _, context in
            let code = try context.parameters.require("code", as: Int.self)
            return Response(status: .init(code: code), body: .init(byteBuffer: ByteBuffer(string: "status \(code)\n")))
        }
        router.get("/text") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "this is not an image\n")))
        }
        return router
    }
}

enum OriginFault: Error { case connectionDropped }

struct CountingMiddleware<Context: RequestContext>: RouterMiddleware {
    let counts: RequestCounts
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        counts.record(request.uri.path)
        return try await next(request, context)
    }
}
