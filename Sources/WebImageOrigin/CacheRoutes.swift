public import Foundation
import Hummingbird
import WebImage

/// Routes for testing HTTP caching semantics.
///
/// - `GET /cache/{name}` serves sample `{name}` (the files of `/images/{name}`) with caching
///   headers chosen by query parameters:
///   - `cc=V`: `Cache-Control: V` (URL-encoded, e.g. `cc=max-age%3D60`, `cc=no-store`); absent:
///     no `Cache-Control`;
///   - `expires=S`: `Expires` = now + S seconds (negative: in the past), with a `Date` header;
///   - `etag=0`: no `ETag` (default: one, which changes when the name is swapped);
///   - `lm=1`: a `Last-Modified` (a day later after a swap);
///   - `vary=H`: `Vary: H`; when the request's header `H` names a sample, that sample is served
///     instead (under its own ETag), so each value of `H` gets its own image (`vary=*`: `Vary: *`);
///   - `delay=MS`: the answer waits MS milliseconds (at most 5,000), so that callers overlap.
///
///   It answers `304 Not Modified` (with the same caching headers) when `If-None-Match` matches
///   the current ETag, or — without `If-None-Match` — when `If-Modified-Since` is not older than
///   the `Last-Modified` it would send (`lm=1` only).
/// - `GET /cache-admin/swap/{name}?to={other}`: later `/cache/{name}` serve sample `{other}`
///   under a different ETag (the "image changed at the origin" case).
/// - `GET /cache-admin/fail/{name}?status=C`: later `/cache/{name}` answer status C (a failing
///   origin; conditional requests included).
/// - `GET /cache-admin/reset`: undoes every swap and failure.
///
/// Requests are counted by the origin's request log like every route
/// (`ImageOrigin.requestCount(path: "/cache/a.jpg")`), conditional headers included.
enum CacheRoutes {
    static func add(to router: Router<BasicRequestContext>, files: FileStore) {
        let swaps = SwapTable()

        router.get("/cache/{name}") { request, context in
            let name = try context.parameters.require("name"), query = request.uri.queryParameters
            if let status = swaps.failures.withLock({ $0[name] }) {
                return OriginRoutes.text("status \(status)\n", status: .init(code: status))
            }
            var served = swaps.state.withLock { $0[name] } ?? name
            let varied = query.get("vary")
            if let varied, let pick = request.headers.first(where: { $0.name.canonicalName == varied.lowercased() })?.value,
               files[pick] != nil {
                served = pick
            }
            guard let file = files[served] else { return OriginRoutes.text("no image \(name)\n", status: .notFound) }
            let now = Date()
            var headers = HTTPFields()
            headers[.contentType] = ImageFormat(sniffing: file.data)?.mimeType ?? "application/octet-stream"
            headers[.date] = HTTPDateFormat.string(now)
            if let control = query.get("cc") { headers[.cacheControl] = control }
            if let varied { headers[.vary] = varied }
            if let seconds = query.get("expires", as: Int.self) {
                headers[.expires] = HTTPDateFormat.string(now.addingTimeInterval(Double(seconds)))
            }
            let etag = "\"\(served)-\(file.etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")))\""
            if query.get("etag") != "0" { headers[.eTag] = etag }
            let lastModified = Date(timeIntervalSince1970: 1_761_955_200 + (served == name ? 0 : 86_400))  // 2025-11-01
            if query.get("lm") == "1" { headers[.lastModified] = HTTPDateFormat.string(lastModified) }

            if let match = request.headers[.ifNoneMatch] {
                if query.get("etag") != "0" && match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
                    return Response(status: .notModified, headers: headers)
                }
            } else if query.get("lm") == "1", let since = request.headers[.ifModifiedSince].flatMap(HTTPDateFormat.date),
                      since >= lastModified {
                return Response(status: .notModified, headers: headers)
            }
            if let delay = query.get("delay", as: Int.self) { try await Task.sleep(for: .milliseconds(min(max(delay, 0), 5_000))) }
            headers[.contentLength] = "\(file.data.count)"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.data)))
        }
        router.get("/cache-admin/swap/{name}") { request, context in
            let name = try context.parameters.require("name")
            guard let other = request.uri.queryParameters.get("to"), files[other] != nil else {
                return OriginRoutes.text("swap needs ?to= an existing sample\n", status: .badRequest)
            }
            swaps.state.withLock { $0[name] = other }
            return OriginRoutes.text("\(name) now serves \(other)\n")
        }
        router.get("/cache-admin/fail/{name}") { request, context in
            let name = try context.parameters.require("name")
            guard let status = request.uri.queryParameters.get("status", as: Int.self), (100...599).contains(status) else {
                return OriginRoutes.text("fail needs ?status= an HTTP status\n", status: .badRequest)
            }
            swaps.failures.withLock { $0[name] = status }
            return OriginRoutes.text("\(name) now answers \(status)\n")
        }
        router.get("/cache-admin/reset") { _, _ in
            swaps.state.withLock { $0 = [:] }
            swaps.failures.withLock { $0 = [:] }
            return OriginRoutes.text("swaps reset\n")
        }
    }
}

/// Which sample each swapped name serves now, and which names fail with which status.
final class SwapTable: Sendable {
    let state = Locked<[String: String]>([:])
    let failures = Locked<[String: Int]>([:])
}

/// IMF-fixdate formatting and parsing for the routes' headers.
enum HTTPDateFormat {
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func string(_ date: Date) -> String { formatter().string(from: date) }
    static func date(_ text: String) -> Date? { formatter().date(from: text) }
}

/// Deterministic cache entries for the disk cache's crash and multi-process tests (and the
/// hidden `webimage cache fill`): the bytes of a key are a function of the key and a version.
public enum CacheSamples {
    /// 1–64 KB (or `size` bytes, at least 8): `version` as 8 little-endian bytes, then
    /// pseudo-random bytes derived from `key` and `version` (so a reader can tell which version it
    /// holds, and check every byte).
    public static func bytes(for key: String, version: Int = 0, size: Int? = nil) -> Data {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { state = (state ^ UInt64(byte)) &* 0x100_0000_01b3 }
        state ^= UInt64(truncatingIfNeeded: version) &* 0x9E37_79B9_7F4A_7C15
        if state == 0 { state = 1 }
        let count = size.map { max($0, 8) } ?? 1024 + Int(state % (63 * 1024))
        var bytes = [UInt8](repeating: 0, count: count)
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: version).littleEndian) { bytes.replaceSubrange(0..<8, with: $0) }
        bytes.withUnsafeMutableBufferPointer { buffer in
            for i in 8..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[i] = UInt8(truncatingIfNeeded: state)
            }
        }
        return Data(bytes)
    }

    /// The version `data` says it is (its first 8 bytes).
    public static func version(of data: Data) -> Int? {
        guard data.count >= 8 else { return nil }
        return Int(truncatingIfNeeded: data.prefix(8).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) })
    }
}
