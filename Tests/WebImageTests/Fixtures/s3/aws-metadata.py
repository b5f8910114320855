#!/usr/bin/env python3
"""The platform's credential services on 127.0.0.1, for the S3 credential-chain tests:

- the ECS / EKS Pod Identity container endpoint: GET /creds/ANYTHING, answered only with the
  `Authorization` header the state file names;
- EC2's instance metadata service, IMDSv2 only: PUT /latest/api/token (with
  X-aws-ec2-metadata-token-ttl-seconds) gives a session token, without which the credential
  paths under /latest/meta-data/iam/security-credentials/ answer 401.

    aws-metadata.py STATE.json

STATE.json (read again at every request, so a test can swap the keys): {"id", "secret", "token",
"expiresIn" (seconds from now), "authorization"}. GET /count answers how many credential answers
were given. Prints "listening PORT"; stops when its standard input closes.
"""
import datetime
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = sys.argv[1]
SESSION = "imds-session-token-7f3a"
ROLE = "image-role"
LOCK = threading.Lock()
COUNT = {"container": 0, "imds": 0}


def credentials(with_code):
    with open(STATE) as f:
        state = json.load(f)
    expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=state["expiresIn"])
    body = {"AccessKeyId": state["id"], "SecretAccessKey": state["secret"], "Token": state["token"],
            "Expiration": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}
    if with_code:
        body.update({"Code": "Success", "Type": "AWS-HMAC", "LastUpdated": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")})
    return state, json.dumps(body).encode()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b"", content_type="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        if self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
            self.reply(200, SESSION.encode())
        else:
            self.reply(400)

    def do_GET(self):
        if self.path == "/count":
            with LOCK:
                self.reply(200, json.dumps(COUNT).encode(), "application/json")
            return
        if self.path.startswith("/creds/"):
            state, body = credentials(False)
            if self.headers.get("Authorization") != state.get("authorization"):
                self.reply(401)
                return
            with LOCK:
                COUNT["container"] += 1
            self.reply(200, body, "application/json")
            return
        prefix = "/latest/meta-data/iam/security-credentials/"
        if self.path.startswith(prefix):
            if self.headers.get("X-aws-ec2-metadata-token") != SESSION:
                self.reply(401)  # IMDSv1 is off, as on instances that require tokens
            elif self.path == prefix:
                self.reply(200, (ROLE + "\n").encode())
            elif self.path == prefix + ROLE:
                _, body = credentials(True)
                with LOCK:
                    COUNT["imds"] += 1
                self.reply(200, body)
            else:
                self.reply(404)
            return
        self.reply(404)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening {server.server_address[1]}", flush=True)


def stop_when_input_closes():
    sys.stdin.read()
    server.shutdown()


threading.Thread(target=stop_when_input_closes, daemon=True).start()
server.serve_forever()
