import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import WebImage
import WebImageOrigin

extension ServerTests {
    /// `webimage serve --otlp-endpoint` (issue 29): traces and metrics exported over OTLP/HTTP to a
    /// real receiver on loopback, which decodes them with the OpenTelemetry project's own protobuf
    /// definitions (Fixtures/otlp/otlp-receiver.py, PyPI's opentelemetry-proto; `scripts/setup`
    /// installs it).
    @Suite("webimage serve: OTLP export (process)", .serialized)
    struct ServeOTLPTests {
        /// The receiver on a free port of 127.0.0.1; what it decoded, once its input is closed.
        final class Receiver: @unchecked Sendable {  // set once in init, then only read
            let process = TestProcess()
            let input = Pipe(), output = Pipe()
            let port: Int
            private let rest: PipeReader

            init() async throws {
                let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .appendingPathComponent("Fixtures/otlp/otlp-receiver.py")
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["python3", script.path, "--seconds", "300"]
                process.standardInput = input
                process.standardOutput = output
                rest = PipeReader(output)
                try process.run()
                let line = String(decoding: await ServeCommandTests.ServeProcess.firstLine(of: output.fileHandleForReading), as: UTF8.self)
                guard line.hasPrefix("listening "), let port = Int(line.dropFirst(10).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    process.terminate()
                    throw ServeCommandTests.CLIFailure(description: "the OTLP receiver did not start (is opentelemetry-proto installed? scripts/setup): \(line)")
                }
                self.port = port
                rest.start()
            }

            /// Stops the receiver and returns every export request it decoded.
            func stop() async throws -> [Export] {
                try? input.fileHandleForWriting.close()
                let process = self.process, rest = self.rest
                let data = await offPool {
                    let data = rest.data()
                    process.waitUntilExit()
                    return data
                }
                return try data.split(separator: 0x0A).map { try JSONDecoder().decode(Export.self, from: Data($0)) }
            }
        }

        struct Export: Decodable {
            var signal: String
            var contentType: String
            var spans: [Span]?
            var metrics: [Metric]?
        }

        struct Span: Decodable {
            var name, traceId, spanId, parentSpanId: String
            var kind: Int  // OTLP's SpanKind: 1 internal, 2 server, 3 client
            var attributes: [String: Value]
            var service: String?
        }

        struct Metric: Decodable {
            var name: String
            var points: [Point]
            var service: String?
            struct Point: Decodable {
                var attributes: [String: Value]
                var value: Double?
                var count: Int?
            }
        }

        /// An attribute's value: OTLP's AnyValue as JSON gives it.
        enum Value: Decodable, Equatable {
            case string(String), number(Double), bool(Bool)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let bool = try? container.decode(Bool.self) { self = .bool(bool) }
                else if let number = try? container.decode(Double.self) { self = .number(number) }
                else { self = .string(try container.decode(String.self)) }
            }
        }

        static func get(_ url: String, headers: [(String, String)] = [], client: HTTPClient) async throws -> (status: Int, body: Data) {
            var request = HTTPClientRequest(url: url)
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response = try await client.execute(request, timeout: .seconds(60))
            return (Int(response.status.code), Data(buffer: try await response.body.collect(upTo: 10 << 20)))
        }

        #if WEBIMAGE_TSAN
        /// scripts/tsan's build leaves swift-otel out (it does not compile under -sanitize=thread with
        /// Swift 6.3.1; Package.swift): asking that `serve` for OTLP export is a usage error.
        @Test func theSanitizerBuildSaysOTLPIsNotInIt() async throws {
            let result = try await WebImageCommand.run(["serve", "--port", "0", "--otlp-endpoint", "http://127.0.0.1:4318"])
            #expect(result.status == 64 && result.stderr.contains("without OTLP export"), "\(result.stderr)")
        }
        #else
        @Test func spansNestUnderTheCallersTraceAndCountersArriveWhenTheServerStops() async throws {
            try await withOrigin { origin in
                let receiver = try await Receiver()
                // Intervals of a minute: what arrives was sent by the flush at shutdown.
                let serve = try await ServeCommandTests.ServeProcess(
                    ["--allow-private-networks", "--otlp-endpoint", "http://127.0.0.1:\(receiver.port)"],
                    environment: [
                        "WEBIMAGE_LOG_LEVEL": "info", "OTEL_SERVICE_NAME": "thumbs",
                        "OTEL_METRIC_EXPORT_INTERVAL": "60000", "OTEL_BSP_SCHEDULE_DELAY": "60000",
                    ])
                let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
                defer { withExtendedLifetime(shutdownOnExit) {} }
                let base = "http://127.0.0.1:\(serve.port)"
                let trace = "4bf92f3577b34da6a3ce929d0e0e4736", parent = "00f067aa0ba902b7"
                let image = "\(base)/img?url=\(ServerHarness.encode(origin.imageURL("photo.jpg").absoluteString))&w=40&format=webp"
                let rendered = try await Self.get(image, headers: [("traceparent", "00-\(trace)-\(parent)-01")], client: client)
                #expect(rendered.status == 200)
                #expect(try await Self.get(image, client: client).status == 200)  // from the result cache
                let missing = "\(base)/img?url=\(ServerHarness.encode(origin.imageURL("none.jpg").absoluteString))&w=40"
                #expect(try await Self.get(missing, client: client).status == 404)
                #expect(origin.requests.allSatisfy { $0.headers["traceparent"] == nil }, "no trace context goes to an origin")
                let prometheus = String(decoding: try await Self.get("\(base)/metrics", client: client).body, as: UTF8.self)
                #expect(prometheus.contains("webimage_server_requests_total{status=\"200\"} 2"), "/metrics stays: \(prometheus.prefix(400))")
                kill(serve.process.processIdentifier, SIGTERM)
                let (exitCode, log) = await serve.waitForExit()
                #expect(exitCode == 0, "\(log)")
                #expect(log.contains("trace_id=\(trace)"), "the access log carries the caller's trace id: \(log)")
                try await client.shutdown()
                let exports = try await receiver.stop()
                #expect(exports.allSatisfy { $0.contentType == "application/x-protobuf" })

                let spans = exports.flatMap { $0.spans ?? [] }
                let request = try #require(spans.first { $0.name == "/img" && $0.traceId == trace }, "\(spans.map(\.name))")
                #expect(request.parentSpanId == parent && request.kind == 2 && request.service == "thumbs")
                #expect(request.attributes["http.response.status_code"] == .number(200))
                let render = try #require(spans.first { $0.name == "webimage.render" })
                #expect(render.traceId == trace && render.parentSpanId == request.spanId)
                #expect(render.attributes["webimage.output.format"] == .string("webp"))
                #expect(render.attributes["webimage.output.bytes"] == .number(Double(rendered.body.count)))
                #expect(spans.contains { $0.name == "webimage.data" && $0.traceId == trace }, "the pipeline's fetch is in the caller's trace")
                #expect(spans.contains { $0.name == "/img" && $0.attributes["http.response.status_code"] == .number(404) })

                // The counters' last export: cumulative, as the Prometheus endpoint counts them.
                let metrics = exports.compactMap(\.metrics).last ?? []
                let requests = try #require(metrics.first { $0.name == "webimage_server_requests_total" }, "\(metrics.map(\.name))")
                #expect(requests.service == "thumbs")
                #expect(requests.points.first { $0.attributes["status"] == .string("200") }?.value == 2)
                #expect(requests.points.first { $0.attributes["status"] == .string("404") }?.value == 1)
                #expect(metrics.contains { $0.name == "webimage_server_stage_seconds" }, "the stage timers")
                #expect(metrics.contains { $0.name == "webimage_pipeline_images_total" }, "the library's own counters, through MetricsSystem")
            }
        }

        @Test func aSignalsOwnStandardVariableExportsThatSignalAloneAndJSONIsSpoken() async throws {
            let receiver = try await Receiver()
            let serve = try await ServeCommandTests.ServeProcess(
                [], environment: [
                    "WEBIMAGE_LOG_LEVEL": "error", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:\(receiver.port)/v1/traces",
                    "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_METRIC_EXPORT_INTERVAL": "60000",
                ])
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup), shutdownOnExit = ShutdownOnExit(client)
            defer { withExtendedLifetime(shutdownOnExit) {} }
            #expect(try await Self.get("http://127.0.0.1:\(serve.port)/health", client: client).status == 200)
            try await client.shutdown()
            kill(serve.process.processIdentifier, SIGTERM)
            #expect(await serve.waitForExit().0 == 0)
            let exports = try await receiver.stop()
            #expect(!exports.isEmpty && exports.allSatisfy { $0.contentType.hasPrefix("application/json") }, "\(exports.map(\.contentType))")
            #expect(exports.contains { ($0.spans ?? []).contains { $0.name == "/health" && $0.service == "webimage" } })
            #expect(!exports.contains { $0.signal == "metrics" }, "no metrics endpoint was named: none are sent (not to localhost:4318 either)")
        }

        @Test func settingsThisBuildCannotHonourAreUsageErrorsNotCrashes() async throws {
            let cases: [([String], [String: String], String)] = [
                (["--otlp-endpoint", "ftp://127.0.0.1:4318"], [:], "--otlp-endpoint"),
                (["--otlp-endpoint", "http://127.0.0.1:4318"], ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], "OTLP over HTTP only"),
                (["--otlp-endpoint", "http://127.0.0.1:4318"], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4319"], "both set"),
                ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "https://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"], "OTLP export cannot start"),
                ([], ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_PROPAGATORS": "tracecontext,b3"], "b3"),
                ([], ["WEBIMAGE_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_SAMPLER": "jaeger_remote"], "jaeger_remote"),
                ([], ["WEBIMAGE_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_METRICS_EXPORTER": "prometheus"], "OTEL_METRICS_EXPORTER"),
            ]
            for (arguments, environment, message) in cases {
                let result = try await WebImageCommand.run(["serve", "--port", "0"] + arguments, environment: environment)
                #expect(result.status == 64, "\(arguments) \(environment): \(result.stderr)")
                #expect(result.stderr.contains(message), "\(result.stderr)")
            }
        }
        #endif
    }
}
