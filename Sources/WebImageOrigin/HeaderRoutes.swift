import Foundation
import Hummingbird
import WebImage

/// Routes that answer with the header values a test names, however wrong: the header-parsing
/// tests send `0`, `-1`, `2^63`, `1e300`, `inf`, `nan`, words and duplicates through them.
///
/// - `/answer/{name}?status=C&header=Name:Value&header=…` answers C (default 200) with the
///   image's `Content-Type`, `ETag` and `Accept-Ranges: bytes`, then each `header` as given (a
///   name given twice is sent twice). The body is the image (`body=none`: nothing). With a
///   `Content-Length` among the headers, at most that many bytes are written (all of them if it
///   is no number), and the connection is dropped if it promised more than was written.
/// - `/resume/{name}?cut=N&header=…` — the first request of each URL answers 200 with the full
///   `Content-Length`, an `ETag` and `Accept-Ranges: bytes`, sends N bytes and drops the
///   connection (a resumable download); every later one answers `206` with the given headers
///   (the test writes `Content-Range` and `Content-Length`) and the image's remaining bytes,
///   then drops the connection.
enum HeaderRoutes {
    static func add(to router: Router<BasicRequestContext>, files: FileStore) {
        let attempts = AttemptCounter()
        router.get("/answer/{name}") { request, context in
            let name = try context.parameters.require("name"), query = request.uri.queryParameters
            guard let file = files[name] else { return OriginRoutes.text("not found\n", status: .notFound) }
            var headers = baseHeaders(file)
            for (field, value) in fields(query.getAll("header")) { headers.append(HTTPFields.Element(name: field, value: value)) }
            let payload = query.get("body") == "none" ? Data() : file.data
            return Response(status: .init(code: query.get("status", as: Int.self) ?? 200), headers: headers, body: body(payload, headers))
        }
        router.get("/resume/{name}") { request, context in
            let name = try context.parameters.require("name"), query = request.uri.queryParameters
            guard let file = files[name] else { return OriginRoutes.text("not found\n", status: .notFound) }
            let cut = min(query.get("cut", as: Int.self) ?? file.data.count / 2, file.data.count)
            var headers = baseHeaders(file)
            if attempts.next("\(name)?\(request.uri.query ?? "")") == 1 {
                headers[.contentLength] = "\(file.data.count)"
                let sent = file.data.prefix(cut)
                return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(bytes: sent))
                    throw OriginFault.connectionDropped
                })
            }
            for (field, value) in fields(query.getAll("header")) { headers.append(HTTPFields.Element(name: field, value: value)) }
            let rest = file.data.dropFirst(cut)
            return Response(status: .partialContent, headers: headers, body: ResponseBody { writer in
                try await writer.write(ByteBuffer(bytes: rest))
                throw OriginFault.connectionDropped
            })
        }
    }

    private static func baseHeaders(_ file: FileStore.File) -> HTTPFields {
        var headers = HTTPFields()
        headers[.contentType] = ImageFormat(sniffing: file.data)?.mimeType ?? "application/octet-stream"
        headers[.eTag] = file.etag
        headers[.acceptRanges] = "bytes"
        return headers
    }

    /// `Name:Value` pairs (split at the first `:`); names that are no valid field name are skipped.
    private static func fields(_ pairs: [String]) -> [(HTTPFields.Element.Name, String)] {
        pairs.compactMap { pair in
            guard let colon = pair.firstIndex(of: ":"), let name = HTTPFields.Element.Name(String(pair[..<colon])) else { return nil }
            return (name, String(pair[pair.index(after: colon)...]))
        }
    }

    /// The body as `Content-Length` (if any) has it: at most the declared bytes, and the
    /// connection dropped when fewer were written than declared.
    private static func body(_ data: Data, _ headers: HTTPFields) -> ResponseBody {
        let declared = headers[.contentLength].flatMap { Int($0) }
        guard headers[.contentLength] != nil else { return ResponseBody(byteBuffer: ByteBuffer(bytes: data)) }
        let sent = declared.map { data.prefix(max(0, $0)) } ?? data
        let short = declared.map { $0 != sent.count } ?? true
        return ResponseBody { writer in
            if !sent.isEmpty { try await writer.write(ByteBuffer(bytes: sent)) }
            if short { throw OriginFault.connectionDropped }
            try await writer.finish(nil)
        }
    }
}
