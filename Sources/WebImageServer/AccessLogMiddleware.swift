public import Hummingbird
public import Logging

/// One log line per request: method, path and query, status, body size, duration, the result
/// cache's answer and the stage timings (`Server-Timing`).
///
/// ```swift
/// router.add(middleware: AccessLogMiddleware(logger: Logger(label: "webimage.access")))
/// ```
public struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    public let logger: Logger

    public init(logger: Logger) { self.logger = logger }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock(), start = clock.now
        do {
            let response = try await next(request, context)
            log(request, status: Int(response.status.code), response: response, elapsed: clock.now - start)
            return response
        } catch {
            log(request, status: (error as? any HTTPResponseError)?.status.code ?? 500, response: nil, elapsed: clock.now - start)
            throw error
        }
    }

    private func log(_ request: Request, status: Int, response: Response?, elapsed: Duration) {
        var metadata: Logger.Metadata = [
            "status": "\(status)",
            "ms": "\(Double(Int(elapsed.milliseconds * 10)) / 10)",
        ]
        if let length = response?.headers[.contentLength] { metadata["bytes"] = "\(length)" }
        if let cache = response?.headers[HTTPFields.Element.Name("X-Cache")!] { metadata["cache"] = "\(cache)" }
        if let timing = response?.headers[HTTPFields.Element.Name("Server-Timing")!] { metadata["timing"] = "\(timing)" }
        logger.info("\(request.method) \(request.uri.description)", metadata: metadata)
    }
}
