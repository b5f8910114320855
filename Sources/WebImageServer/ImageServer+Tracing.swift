import Foundation
import Tracing
import WebImage

extension ImageServer {
    /// `render` inside a `webimage.render` span, a child of the request's span (Hummingbird's
    /// `TracingMiddleware`): the output format, the bytes written and each stage's milliseconds as
    /// attributes, a failure as its error. The fetch before it has the pipeline's own spans. With no
    /// tracer installed the span is the no-op one, and nothing is bound to the task.
    func traced(
        format: ImageFormat, _ render: () async throws(ImageServerError) -> (Data, ImageRenderer.Timings)
    ) async throws(ImageServerError) -> (Data, ImageRenderer.Timings) {
        let span = startSpan("webimage.render")
        defer { span.end() }
        span.attributes["webimage.output.format"] = format.rawValue
        do throws(ImageServerError) {
            let (data, timings) = try await render()
            span.attributes["webimage.output.bytes"] = data.count
            span.attributes["webimage.decode.ms"] = timings.decode.milliseconds
            span.attributes["webimage.process.ms"] = timings.process.milliseconds
            span.attributes["webimage.encode.ms"] = timings.encode.milliseconds
            return (data, timings)
        } catch {
            span.recordError(error)
            span.attributes["webimage.error.code"] = error.code
            span.setStatus(.init(code: .error, message: error.message))
            throw error
        }
    }
}
