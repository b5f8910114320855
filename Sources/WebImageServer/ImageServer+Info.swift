import Foundation
import Hummingbird
import NIOCore
import WebImage

extension ImageServer {
    /// `GET /info`: the source's format, size, frames, colour profile, average colour, BlurHash
    /// and ThumbHash as JSON (``ImageInfo``). Signed, allow-listed, fetched and limited as `/img`
    /// is (``verifySignature(_:)``, ``fetchSource(_:request:client:timing:)``, ``runOffPool(bytes:for:slot:watch:source:_:)``);
    /// every failure is an ``ImageServerError`` answered as JSON.
    func info(_ request: Request, client: RequestClient) async -> Response {
        let clock = ContinuousClock(), start = clock.now
        let response: Response
        do {
            response = try await describe(request, client: client)
        } catch {
            response = errorResponse(error)
        }
        metrics.request(status: Int(response.status.code))
        metrics.stage("total", clock.now - start)
        return response
    }

    /// The strong ETag of a description: the source's bytes and `bh` (all the JSON depends on),
    /// under a version (`info1`) to change when the JSON's fields or their computation do.
    static func infoETag(source: Data, parameters: InfoParameters) -> String {
        var fields = KeyEncoding("info1")
        fields.add("bh", "\(parameters.blurHashComponents.x):\(parameters.blurHashComponents.y)")
        return validator(source: source, fields: fields)
    }

    private func describe(_ request: Request, client: RequestClient) async throws(ImageServerError) -> Response {
        try verifySignature(request)
        let query = request.uri.queryParameters.map { (String($0.key), String($0.value)) }
        let parameters = try InfoParameters(query: query)
        try checkAllowed(parameters.source)
        var timing: [(String, Duration)] = []
        let (original, slot, watch) = try await fetchSource(parameters.source.url, request: request, client: client, timing: &timing)
        // As `/img`: a matching If-None-Match is answered before the decode (the tag names the bytes).
        let etag = Self.infoETag(source: original.data, parameters: parameters)
        let cacheControl = ResultCaching(original).cacheControl(maxAge: configuration.cacheMaxAge)
        if Self.matches(request.headers[.ifNoneMatch], etag) {
            slot.release()
            var headers = HTTPFields()
            headers[.cacheControl] = cacheControl
            headers[.eTag] = etag
            return Response(status: .notModified, headers: headers)
        }
        let options = ImageInfo.decodingOptions(maxPixels: configuration.maxSourcePixels)
        let data = original.data, header = original.header, components = parameters.blurHashComponents, coders = configuration.coders
        // The decode's own allocation (twice when a worker process decodes: it holds a copy until
        // sent), the thumbnail and the hashes' copies of it (at most 100 px a side).
        let held = MemoryBudget.bytes(toDecode: header, options: options, coders: coders)
        let bytes = held > .max - 4 * 100 * 100 * 4 ? .max : held + 4 * 100 * 100 * 4
        let info = try await runOffPool(bytes: bytes, for: original, slot: slot, watch: watch, source: parameters.source.url.absoluteString) {
            () throws(ImageServerError) in try ImageInfo(data, header: header, options: options, components: components, coders: coders)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body: Data
        do { body = try encoder.encode(info) } catch {
            throw ImageServerError(status: 500, code: "internal", message: "the description could not be encoded")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.contentLength] = String(body.count)
        headers[.cacheControl] = cacheControl
        headers[.eTag] = etag
        metrics.bytesOut.increment(by: body.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
