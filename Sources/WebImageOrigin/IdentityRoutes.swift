public import Foundation
import Hummingbird
import WebImage

/// Routes that answer each identity with its own image, for the isolation tests: a caller who
/// receives another identity's image can tell.
///
/// - `/identity/{name}` serves ``IdentityImages/png(for:)`` of the identity the request presents
///   (``IdentityImages/identity(authorization:cookie:tenant:)`` of its `Authorization`, `Cookie`
///   and `X-Tenant` headers), or of `?for=W` when given (a private URL: the URL is the key).
///   `?challenge=1` answers `401` with a Basic challenge to a request without `Authorization`;
///   `?delay=MS` holds the answer (after the challenge); `?cc=V` sets `Cache-Control` (default
///   `max-age=3600`).
/// - `/identity-lookup/{name}` is a two-stage look-up: its plain-text answer is the URL
///   `/identity/{name}?for=W` of the identity W the look-up presents (`max-age=60`); it takes
///   `challenge` and `delay` too.
enum IdentityRoutes {
    static func add(to router: Router<BasicRequestContext>) {
        router.get("/identity/{name}") { request, _ in
            let query = request.uri.queryParameters
            if let refusal = try await challengeAndHold(request) { return refusal }
            let who = query.get("for") ?? presented(request)
            var headers = HTTPFields()
            headers[.contentType] = "image/png"
            headers[.cacheControl] = query.get("cc") ?? "max-age=3600"
            let body = try IdentityImages.png(for: who)
            headers[.contentLength] = "\(body.count)"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        router.get("/identity-lookup/{name}") { request, context in
            let name = try context.parameters.require("name")
            if let refusal = try await challengeAndHold(request) { return refusal }
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            let who = presented(request).addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
            var headers = HTTPFields()
            headers[.cacheControl] = "max-age=60"
            return OriginRoutes.text("/identity/\(name)?for=\(who)\n", headers: headers)
        }
    }

    private static func presented(_ request: Request) -> String {
        IdentityImages.identity(
            authorization: request.headers[.authorization], cookie: request.headers[.cookie],
            tenant: request.headers[HTTPFields.Element.Name("X-Tenant")!])
    }

    /// The `401` of `?challenge=1` (at once), else `nil` after `?delay=`.
    private static func challengeAndHold(_ request: Request) async throws -> Response? {
        let query = request.uri.queryParameters
        if query.get("challenge") == "1", request.headers[.authorization] == nil {
            var headers = HTTPFields()
            headers[.wwwAuthenticate] = "Basic realm=\"identity\""
            return OriginRoutes.text("authentication required\n", status: .unauthorized, headers: headers)
        }
        if let delay = query.get("delay", as: Int.self) { try await Task.sleep(for: .milliseconds(min(delay, 10_000))) }
        return nil
    }
}

/// The image each identity gets from ``IdentityRoutes``: a PNG whose size is a function of the
/// identity, so a test can tell whose image it holds from its dimensions.
///
/// ```swift
/// let who = IdentityImages.identity(authorization: "Bearer alice")
/// #expect(response.image.pixelWidth == IdentityImages.size(for: who).width)
/// ```
public enum IdentityImages {
    /// The identity a request with these headers presents (`nil`: absent).
    public static func identity(authorization: String? = nil, cookie: String? = nil, tenant: String? = nil) -> String {
        "auth=\(authorization ?? "");cookie=\(cookie ?? "");tenant=\(tenant ?? "")"
    }

    /// Width and height (8–263 each) from a 64-bit FNV-1a hash of `identity`.
    public static func size(for identity: String) -> (width: Int, height: Int) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identity.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return (8 + Int(hash % 256), 8 + Int((hash >> 16) % 256))
    }

    /// The PNG served to `identity`.
    public static func png(for identity: String) throws -> Data {
        let size = size(for: identity)
        return try SampleImages.png(width: size.width, height: size.height, seed: 7, alpha: false)
    }
}
