import Foundation
import Hummingbird
import WebImage

/// Routes that behave like real servers do on a bad day, for the loading layer's tests.
///
/// - `/auth/images/{name}`: Basic authentication `user:secret`, else `401` with a challenge.
/// - `/cookie/set` sets `session=abc123`; `/cookie/images/{name}` answers `403` without it.
/// - `/negotiate/{name}` serves `{name}.webp` when `Accept` names `image/webp`, else `{name}.jpg`
///   (with `Vary: Accept`; `/images` query parameters such as `delay` apply).
/// - `/redirect/loop` redirects to itself; `/redirect/{n}/{name}` redirects `n` times, then serves;
///   `/redirect-to?location=URL` redirects to any URL.
/// - `/lookup/{name}` answers the image's URL as plain text (relative); `?maxAge=S` allows reuse
///   for S seconds (else `no-store`); `?via=header` puts it in `X-Image-URL` instead;
///   `?imageQuery=Q` appends `?Q` to the answered URL; `?auth=1` and `?cookie=1` require what
///   `/auth` and `/cookie` do; `?status=C` answers C; `?fails=K[&retryAfter=S]` answers 503 K times.
/// - `/flaky/{name}?fails=K` fails the first K requests of that URL: `&cut=N` sends N bytes and
///   drops the connection (`&hang=MS` waits MS before dropping it), `&failStatus=C` answers C
///   (with `&retryAfter=S`). Later requests behave
///   like `/images/{name}`, ranges included.
/// - `/big?size=N&chunk=C[&length=0][&stall=MS]` streams N bytes (without `Content-Length` when
///   `length=0`), counting what was sent and whether the client hung up.
enum BehaviourRoutes {
    static func add(to router: Router<BasicRequestContext>, files: FileStore, log: RequestLog) {
        let attempts = AttemptCounter()

        router.get("/auth/images/{name}") { request, context in
            guard request.headers[.authorization] == basicUserSecret else {
                var headers = HTTPFields()
                headers[.wwwAuthenticate] = "Basic realm=\"images\""
                return OriginRoutes.text("authentication required\n", status: .unauthorized, headers: headers)
            }
            return try await OriginRoutes.serve(try context.parameters.require("name"), request: request, files: files, log: log)
        }
        router.get("/cookie/set") { _, _ in
            var headers = HTTPFields()
            headers[.setCookie] = "session=abc123; Path=/; HttpOnly"
            return OriginRoutes.text("cookie set\n", headers: headers)
        }
        router.get("/cookie/images/{name}") { request, context in
            guard request.headers[.cookie]?.contains("session=abc123") == true else {
                return OriginRoutes.text("no session cookie\n", status: .forbidden)
            }
            return try await OriginRoutes.serve(try context.parameters.require("name"), request: request, files: files, log: log)
        }
        router.get("/negotiate/{name}") { request, context in
            let name = try context.parameters.require("name")
            let webp = request.headers[.accept]?.contains("image/webp") == true
            var response = try await OriginRoutes.serve(name + (webp ? ".webp" : ".jpg"), request: request, files: files, log: log)
            response.headers[.vary] = "Accept"
            return response
        }
        router.get("/redirect/loop") { _, _ in redirect(to: "/redirect/loop") }
        // Anywhere, absolute URLs included (the image server's SSRF tests redirect to 127.0.0.1).
        router.get("/redirect-to") { request, _ in redirect(to: request.uri.queryParameters.get("location") ?? "/") }
        router.get("/redirect/{n}/{name}") { _, context in
            let n = try context.parameters.require("n", as: Int.self), name = try context.parameters.require("name")
            return redirect(to: n <= 1 ? "/images/\(name)" : "/redirect/\(n - 1)/\(name)")
        }
        router.get("/lookup/{name}") { request, context in
            let name = try context.parameters.require("name"), query = request.uri.queryParameters
            if let delay = query.get("delay", as: Int.self) { try await Task.sleep(for: .milliseconds(delay)) }
            if query.get("auth") == "1", request.headers[.authorization] != basicUserSecret {
                var headers = HTTPFields()
                headers[.wwwAuthenticate] = "Basic realm=\"lookups\""
                return OriginRoutes.text("authentication required\n", status: .unauthorized, headers: headers)
            }
            if query.get("cookie") == "1", request.headers[.cookie]?.contains("session=abc123") != true {
                return OriginRoutes.text("no session cookie\n", status: .forbidden)
            }
            if let status = query.get("status", as: Int.self) { return OriginRoutes.text("status \(status)\n", status: .init(code: status)) }
            if let fails = query.get("fails", as: Int.self), attempts.next("lookup \(name)?\(request.uri.query ?? "")") <= fails {
                var headers = HTTPFields()
                headers[.retryAfter] = query.get("retryAfter") ?? "0"
                return OriginRoutes.text("try again later\n", status: .serviceUnavailable, headers: headers)
            }
            var headers = HTTPFields()
            headers[.cacheControl] = query.get("maxAge", as: Int.self).map { "max-age=\($0)" } ?? "no-store"
            let target = "/images/\(name)" + (query.get("imageQuery").map { "?" + $0 } ?? "")
            if query.get("via") == "header" {
                headers[HTTPFields.Element.Name("X-Image-URL")!] = target
                return OriginRoutes.text("", headers: headers)
            }
            return OriginRoutes.text(target + "\n", headers: headers)
        }
        router.get("/flaky/{name}") { request, context in
            let name = try context.parameters.require("name"), query = request.uri.queryParameters
            let key = "\(name)?\(request.uri.query ?? "")"
            let attempt = attempts.next(key)
            // `statuses=503,429,…`: attempt n fails with the n-th status (a 429 or 503 with
            // `retryAfter`'s Retry-After only when it is a 429), then the file is served.
            let statuses = (query.get("statuses") ?? "").split(separator: ",").compactMap { Int($0) }
            if !statuses.isEmpty {
                guard attempt <= statuses.count else { return try await OriginRoutes.serve(name, request: request, files: files, log: log) }
                var headers = HTTPFields()
                if statuses[attempt - 1] == 429, let after = query.get("retryAfter") { headers[.retryAfter] = after }
                return OriginRoutes.text("try again later\n", status: .init(code: statuses[attempt - 1]), headers: headers)
            }
            guard attempt <= (query.get("fails", as: Int.self) ?? 1), let file = files[name] else {
                return try await OriginRoutes.serve(name, request: request, files: files, log: log)
            }
            if let status = query.get("failStatus", as: Int.self) {
                var headers = HTTPFields()
                if let after = query.get("retryAfter") { headers[.retryAfter] = after }
                return OriginRoutes.text("try again later\n", status: .init(code: status), headers: headers)
            }
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            headers[.eTag] = file.etag
            headers[.acceptRanges] = "bytes"
            let cut = file.data.prefix(query.get("cut", as: Int.self) ?? file.data.count / 2)
            let hang = query.get("hang", as: Int.self) ?? 0
            return Response(status: .ok, headers: headers, body: ResponseBody(contentLength: file.data.count) { writer in
                try await writer.write(ByteBuffer(bytes: cut))
                if hang > 0 { try await Task.sleep(for: .milliseconds(hang)) }
                throw OriginFault.connectionDropped
            })
        }
        router.get("/big") { request, _ in
            let query = request.uri.queryParameters
            let size = query.get("size", as: Int.self) ?? 1 << 20, chunk = query.get("chunk", as: Int.self) ?? 64 * 1024
            var headers = HTTPFields()
            headers[.contentType] = "image/jpeg"
            let declare = query.get("length") != "0"
            if declare { headers[.contentLength] = "\(size)" }
            let body = OriginRoutes.streamed(
                Data(count: size), chunk: chunk, stall: query.get("stall", as: Int.self) ?? 0, path: "/big", log: log,
                declareLength: declare)
            return Response(status: .ok, headers: headers, body: body)
        }
    }

    static let basicUserSecret = "Basic " + Data("user:secret".utf8).base64EncodedString()

    static func redirect(to location: String) -> Response {
        var headers = HTTPFields()
        headers[.location] = location
        return Response(status: .found, headers: headers)
    }
}

/// Counts requests per key (a class: the routes' closures share one instance).
final class AttemptCounter: Sendable {
    private let counts = Locked<[String: Int]>([:])
    func next(_ key: String) -> Int { counts.withLock { $0[key, default: 0] += 1; return $0[key]! } }
}
