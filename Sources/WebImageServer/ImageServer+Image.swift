import Foundation
import Hummingbird
import Logging
import NIOCore
import WebImage

extension ImageServer {
    /// `GET /img`: check, look up, admit, fetch, render, answer. Every failure is an
    /// ``ImageServerError`` answered as JSON.
    func image(_ request: Request, client: RequestClient) async -> Response {
        let clock = ContinuousClock(), start = clock.now
        let response: Response
        var negotiated = false
        do {
            response = try await render(request, client: client, negotiated: &negotiated)
        } catch {
            // Under `format=auto` a failure can depend on the format chosen (an AVIF-only
            // encoder error), so a cache keeps it per Accept, as it keeps the image.
            response = errorResponse(error, varyAccept: negotiated)
        }
        metrics.request(status: Int(response.status.code))
        metrics.stage("total", clock.now - start)
        return response
    }

    private func render(_ request: Request, client: RequestClient, negotiated: inout Bool) async throws(ImageServerError) -> Response {
        try verifySignature(request)
        let query = try presets.expand(request.uri.queryParameters.map { (String($0.key), String($0.value)) })
        let parameters = try ImageParameters(query: query, maxSide: configuration.maxOutputSide)
        let mark = try configuration.watermark(for: parameters.watermark)
        let processors = parameters.processors
        try RenderBudget(configuration).check(steps: processors.count)
        let source = parameters.url.absoluteString
        // Compared part by part with the parsed source; each redirect hop is checked again by the loader.
        try checkAllowed(parameters.source)
        negotiated = parameters.format == .auto
        let preference = parameters.format == .auto ? FormatNegotiation.preference(accept: request.headers[.accept]) : .none
        let key = parameters.cacheKey(
            negotiated: preference.rawValue, color: configuration.colorHandling, watermark: mark?.digest, rendering: renderingKey)
        var timing: [(String, Duration)] = []

        if let (cached, layer) = await results.image(for: key) {
            metrics.resultCache(layer.rawValue)
            return try await imageResponse(
                cached, request: request, parameters: parameters, cache: "hit-\(layer.rawValue)", timing: [],
                held: ResponseHolds.key(for: key, etag: cached.etag), existing: layer == .memory, channel: client.channel)
        }
        if results.isEnabled { metrics.resultCache("miss") }

        // From here the slot is held until the render task ends (or released on the way out).
        let (original, slot, watch) = try await fetchSource(parameters.url, request: request, client: client, timing: &timing)
        let format = FormatNegotiation.outputFormat(parameters.format, preference: preference, source: original.header)
        let etag = Self.etag(source: original.data, key: key, format: format)
        let caching = ResultCaching(original)
        if Self.matches(request.headers[.ifNoneMatch], etag) {
            slot.release()
            return notModified(etag: etag, parameters: parameters, caching: caching)
        }

        let renderer = ImageRenderer(
            parameters: parameters, processors: parameters.leadingSteps, finishing: parameters.finishingSteps(for: format, watermark: mark), outputFormat: format,
            quality: parameters.quality ?? configuration.defaultQuality,
            maxPixels: configuration.maxSourcePixels, maxSide: configuration.maxOutputSide,
            colorHandling: configuration.colorHandling, coders: configuration.coders)
        let price: RenderBudget.Price
        do throws(ImageServerError) {
            price = try RenderBudget(configuration).price(original.data, header: original.header, renderer: renderer)
        } catch {
            slot.release()
            throw error
        }
        let data = original.data, header = original.header, decoding = price.decoding
        let (encoded, timings) = try await traced(format: format) { () async throws(ImageServerError) in
            try await runOffPool(bytes: price.bytes, for: original, slot: slot, watch: watch, source: source) { () throws(ImageServerError) in
                try renderer.render(data, header: header, options: decoding)
            }
        }
        for (stage, duration) in [("decode", timings.decode), ("process", timings.process), ("encode", timings.encode)] {
            timing.append((stage, duration))
            metrics.stage(stage, duration)
        }
        let rendered = RenderedImage(
            data: encoded, contentType: format.mimeType, etag: etag,
            expiresAt: Date.now.addingTimeInterval(TimeInterval(configuration.cacheMaxAge)))
        if caching == .shared { results.store(rendered, for: key) }
        return try await imageResponse(
            rendered, request: request, parameters: parameters, cache: "miss", timing: timing, caching: caching,
            held: caching == .shared ? ResponseHolds.key(for: key, etag: etag) : nil, channel: client.channel)
    }

    /// The image's response, its bytes held in the memory budget until written
    /// (``ResponseHolds``; shared under `held` with other responses of the same result).
    private func imageResponse(
        _ image: RenderedImage, request: Request, parameters: ImageParameters, cache: String, timing: [(String, Duration)],
        caching: ResultCaching = .shared, held: String?, existing: Bool = false, channel: (any Channel)?
    ) async throws(ImageServerError) -> Response {
        if Self.matches(request.headers[.ifNoneMatch], image.etag) {
            return notModified(etag: image.etag, parameters: parameters, caching: caching)
        }
        var headers = cachingHeaders(etag: image.etag, parameters: parameters, caching: caching)
        headers[.contentType] = image.contentType
        headers[.contentLength] = String(image.data.count)
        headers[HTTPFields.Element.Name("X-Cache")!] = cache
        if !timing.isEmpty {
            headers[HTTPFields.Element.Name("Server-Timing")!] = timing.map { "\($0.0);dur=\($0.1.millisecondsWithOneDecimal)" }.joined(separator: ", ")
        }
        let hold = try await responseHolds.hold(bytes: image.data.count, key: held, existing: existing)
        metrics.bytesOut.increment(by: image.data.count)
        return Response(status: .ok, headers: headers, body: ResponseHolds.body(image.data, holding: hold, channel: channel))
    }

    private func notModified(etag: String, parameters: ImageParameters, caching: ResultCaching = .shared) -> Response {
        Response(status: .notModified, headers: cachingHeaders(etag: etag, parameters: parameters, caching: caching))
    }

    private func cachingHeaders(etag: String, parameters: ImageParameters, caching: ResultCaching) -> HTTPFields {
        var headers = HTTPFields()
        headers[.cacheControl] = caching.cacheControl(maxAge: configuration.cacheMaxAge)
        headers[.eTag] = etag
        if parameters.format == .auto { headers[.vary] = "Accept" }
        return headers
    }

    func errorResponse(_ error: ImageServerError, varyAccept: Bool = false) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if varyAccept { headers[.vary] = "Accept" }
        if error.status == 429 || error.status == 503 || error.status == 499 {
            // Busy, out of memory, a killed worker: this server, this moment. A cache must not
            // keep the answer for the URL, and the client may try again in a second.
            headers[.retryAfter] = "1"
            headers[.cacheControl] = "no-store"
        } else if error.status == 504 {
            // A deadline passed: the render may have waited behind others' (a CDN kept a small
            // PNG's 504 for everyone while the render threads were full), so not the URL's fault.
            headers[.cacheControl] = "no-store"
        } else {
            headers[.cacheControl] = "public, max-age=\(configuration.errorMaxAge)"
        }
        let body = error.json
        headers[.contentLength] = String(body.count)
        return Response(status: .init(code: error.status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// A strong validator: the source's bytes (their SHA-256, fixed length), then every
    /// parameter and the output format as length-prefixed fields.
    static func etag(source: Data, key: String, format: ImageFormat) -> String {
        var fields = KeyEncoding("etag2")
        fields.add("key", key)
        fields.add("format", format.rawValue)
        return validator(source: source, fields: fields)
    }

    /// The first 16 bytes of SHA-256(SHA-256(`source`) + `fields`), quoted: a strong ETag that
    /// changes with the source's bytes and with every field. `/img` and `/info` use it.
    static func validator(source: Data, fields: KeyEncoding) -> String {
        var hasher = SHA256()
        hasher.update(SHA256.hash(source))
        hasher.update(Data(fields.text.utf8))
        let digest = Hex.lowercase(hasher.finalize().prefix(16))
        return "\"\(digest)\""
    }

    /// `If-None-Match` with a list of tags, or `*`.
    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { tag in
            let tag = tag.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
