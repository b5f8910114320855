#!/usr/bin/env python3
"""A small OTLP/HTTP receiver on 127.0.0.1 for the tests of `webimage serve --otlp-endpoint`.

It decodes what arrives with the OpenTelemetry project's own protobuf definitions (PyPI's
opentelemetry-proto), not with anything of WebImage's, and prints one JSON line per export request:
{"signal": "traces", "spans": [...]} or {"signal": "metrics", "metrics": [...]}, after a first line
"listening PORT". Bodies may be protobuf or JSON, plain or gzip. It stops when its standard input
closes, or after --seconds (default 120), whichever is first.
"""
import argparse
import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest, ExportMetricsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)

LOCK = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(items):
    return {item.key: value(item.value) for item in items}


def spans(request):
    out = []
    for resource_spans in request.resource_spans:
        resource = attributes(resource_spans.resource.attributes)
        for scope in resource_spans.scope_spans:
            for span in scope.spans:
                out.append({
                    "name": span.name, "traceId": span.trace_id.hex(), "spanId": span.span_id.hex(),
                    "parentSpanId": span.parent_span_id.hex(), "kind": span.kind,
                    "status": span.status.code, "attributes": attributes(span.attributes),
                    "durationNs": span.end_time_unix_nano - span.start_time_unix_nano,
                    "service": resource.get("service.name"),
                })
    return out


def points(metric):
    kind = metric.WhichOneof("data")
    data = getattr(metric, kind)
    out = []
    for point in data.data_points:
        entry = {"attributes": attributes(point.attributes)}
        if kind in ("sum", "gauge"):
            entry["value"] = point.as_int if point.WhichOneof("value") == "as_int" else point.as_double
        elif kind == "histogram":
            entry["count"] = point.count
            entry["sum"] = point.sum
        out.append(entry)
    return kind, out


def metrics(request):
    out = []
    for resource_metrics in request.resource_metrics:
        resource = attributes(resource_metrics.resource.attributes)
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                kind, data = points(metric)
                out.append({"name": metric.name, "kind": kind, "points": data, "service": resource.get("service.name")})
    return out


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        if length > 16 << 20:
            self.send_error(413)
            return
        body = self.rfile.read(length)
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        kinds = {"/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse, spans, "spans"),
                 "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse, metrics, "metrics")}
        if self.path not in kinds:
            self.send_error(404)
            return
        request_type, response_type, summary, key = kinds[self.path]
        request = request_type()
        content_type = self.headers.get("Content-Type", "")
        if content_type.startswith("application/json"):
            json_format.Parse(body, request)
        else:
            request.ParseFromString(body)
        line = json.dumps({"signal": self.path.rsplit("/", 1)[1], "contentType": content_type,
                           "userAgent": self.headers.get("User-Agent"), key: summary(request)})
        with LOCK:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        reply = response_type().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=120)
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"listening {server.server_address[1]}", flush=True)
    timer = threading.Timer(arguments.seconds, server.shutdown)
    timer.daemon = True
    timer.start()

    def stop_when_input_closes():
        sys.stdin.read()
        server.shutdown()

    threading.Thread(target=stop_when_input_closes, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
