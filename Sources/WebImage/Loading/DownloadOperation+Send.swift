import Foundation

extension DownloadOperation {
    /// Sends one HTTP request the way every request of this downloader goes — image and look-up
    /// alike: cookies, the request modifier, events, the response modifier, stored cookies, and
    /// the credentials answered to a `401` Basic challenge (the request's, else the downloader's).
    func send(_ url: URL, headers: [HTTPField], timeout: Duration, maxBodySize: Int?) async throws -> DataTransfer {
        try await send(url, headers: headers, timeout: timeout, maxBodySize: maxBodySize, credentials: nil)
    }

    private func send(
        _ url: URL, headers: [HTTPField], timeout: Duration, maxBodySize: Int?, credentials: Credentials?
    ) async throws -> DataTransfer {
        var fields = headers
        if let credentials { fields.append(HTTPField("Authorization", credentials.basicAuthorization)) }
        if configuration.handlesCookies, let cookie = context.cookies.cookieHeader(for: url) { fields.append(HTTPField("Cookie", cookie)) }
        var dataRequest = DataRequest(url: url, headers: fields, timeout: timeout, maxBodySize: maxBodySize)
        var changed: Set<String> = []
        if let modifier = configuration.requestModifier {
            guard let modified = try await modifier(dataRequest) else { throw AttemptFailure(.requestRefused) }
            changed = Self.changedNames(dataRequest.headers, modified.headers)
            dataRequest = modified
        }
        context.events.send(.started(url))
        var transfer = try await context.loader.loadData(for: dataRequest)
        transfer.headersChangedByModifier = changed
        if let modifier = configuration.responseModifier { transfer.response = try await modifier(transfer.response) }
        let response = transfer.response
        context.events.send(.responseReceived(url, response))
        if configuration.handlesCookies {
            context.cookies.store(setCookie: response.headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value), from: response.url)
        }
        if response.statusCode == 401, credentials == nil,
           let answer = request.credentials ?? configuration.credentials,
           response.value(forHeader: "WWW-Authenticate")?.lowercased().hasPrefix("basic") == true {
            // The challenge's body is dropped unread (the loader closes or drains it).
            return try await send(url, headers: headers, timeout: timeout, maxBodySize: maxBodySize, credentials: answer)
        }
        return transfer
    }

    /// One image attempt: the request's headers and validators, a resume from kept bytes, the
    /// response judged (status, type, length) and the body streamed to the callers.
    func attempt(_ timeout: Duration, at url: URL) async throws -> DownloadResult {
        let resume = context.resumables.take(key)
        var headers = Self.merge(configuration.headers, request.headers) + (request.validators?.headers ?? [])
        if let resume {
            headers.append(HTTPField("Range", "bytes=\(resume.data.count)-"))
            headers.append(HTTPField("If-Range", resume.validator))
        }
        let transfer = try await send(url, headers: headers, timeout: timeout, maxBodySize: configuration.maxBodySize)
        let response = transfer.response
        if response.statusCode == 304 {
            // An answer, not a failure: the caller's cached bytes are current.
            if let resume { context.resumables.restore(resume, for: key) }
            var result = DownloadResult(data: Data(), response: response)
            result.headersChangedByModifier = transfer.headersChangedByModifier
            return result
        }
        var body = BodyAccumulator(limit: configuration.maxBodySize, key: key, ticket: ticket, context: context, url: url, memory: memory)
        if response.statusCode == 206, let resume {
            body.seed(resume.data, expectedTotal: try Self.resumedTotal(response, kept: resume.data.count))
        } else {
            // A `206` answers a `Range` only (RFC 9110 §15.3.7): to a request without one it is a
            // slice of the image that would be decoded, and cached, as the whole.
            let unasked = response.statusCode == 206 && !headers.contains { $0.name.lowercased() == "range" }
            guard configuration.acceptableStatusCodes.contains(response.statusCode), !unasked else {
                throw AttemptFailure(.badStatusCode(response.statusCode), retryAfter: response.value(forHeader: "Retry-After"))
            }
            do throws(HTTPHeaderValue.Invalid) { body.expectedTotal = try HTTPHeaderValue.contentLength(response) } catch { throw AttemptFailure(error.downloadError) }
        }
        try checkContentType(response)
        var result = try await body.collect(transfer.body, response: response)
        result.headersChangedByModifier = transfer.headersChangedByModifier
        return result
    }

    /// The names (lowercased) whose values differ between `before` and `after`.
    static func changedNames(_ before: [HTTPField], _ after: [HTTPField]) -> Set<String> {
        func values(_ fields: [HTTPField]) -> [String: [String]] {
            Dictionary(grouping: fields, by: { $0.name.lowercased() }).mapValues { $0.map(\.value) }
        }
        let old = values(before), new = values(after)
        return Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
    }

    /// The full length of a resumed body, from the `206`'s `Content-Range` (checked: it starts
    /// where the kept bytes end, and its `Content-Length`, if any, is the range's length).
    static func resumedTotal(_ response: DataResponse, kept: Int) throws(AttemptFailure) -> Int {
        let range: HTTPHeaderValue.ContentRange
        let length: Int?
        do throws(HTTPHeaderValue.Invalid) {
            range = try HTTPHeaderValue.contentRange(response)
            length = try HTTPHeaderValue.contentLength(response)
        } catch {
            throw AttemptFailure(error.downloadError)
        }
        guard range.first == kept else {
            throw AttemptFailure(.transport(underlying: RangeMismatch(expectedStart: kept)))
        }
        if let length, length != range.count {
            throw AttemptFailure(.invalidHeader(name: "Content-Length", value: String(length)))
        }
        // `last < Int.max` was checked, so `last + 1` cannot overflow.
        return range.complete ?? range.last + 1
    }

    private func checkContentType(_ response: DataResponse) throws(AttemptFailure) {
        guard let acceptable = configuration.acceptableContentTypes else { return }
        let type = response.value(forHeader: "Content-Type")?
            .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard acceptable.contains(type) else { throw AttemptFailure(.badContentType(type)) }
    }

    /// The downloader's headers, except those the request sets itself (a caller's `Accept`
    /// replaces the default one rather than being sent beside it), then the request's.
    static func merge(_ global: [HTTPField], _ own: [HTTPField]) -> [HTTPField] {
        guard !own.isEmpty else { return global }
        let names = Set(own.map { $0.name.lowercased() })
        return global.filter { !names.contains($0.name.lowercased()) } + own
    }
}
