#!/usr/bin/env python3
"""tests/e2e-push-receiver.py - a stand-in for Pyroscope's POST /ingest for
the push tests: listens on 127.0.0.1 only, keeps each request's path, query,
headers and body in DIR (req-N.path, .headers, .body), answers with the
given statuses in turn, and exits by itself after N requests or T seconds.

usage: e2e-push-receiver.py DIR [--port P] [--requests N] [--seconds T]
                            [--statuses 500,500,200] [--tls CERT KEY]
With --tls it speaks HTTPS with that certificate and key (PEM).
The port it listens on is written to DIR/port once it listens."""
import argparse
import http.server
import os
import ssl
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--statuses", default="200")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = ap.parse_args()
    statuses = [int(s) for s in a.statuses.split(",")]
    state = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            n = state["n"]
            state["n"] += 1
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            base = os.path.join(a.dir, "req-%d" % n)
            with open(base + ".body", "wb") as f:
                f.write(body)
            with open(base + ".headers", "w") as f:
                f.write(str(self.headers))
            # The path last: a test waiting for req-N.path finds the rest there.
            with open(base + ".path.tmp", "w") as f:
                f.write(self.path + "\n")
            os.rename(base + ".path.tmp", base + ".path")
            status = statuses[min(n, len(statuses) - 1)]
            reply = b"" if status < 300 else b"storage unavailable: try later\nsecond line\n"
            self.send_response(status)
            # One request a connection, so each handle_request() is one.
            self.close_connection = True
            self.send_header("Connection", "close")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", a.port), Handler)
    srv.timeout = 0.2
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    with open(os.path.join(a.dir, "port.tmp"), "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(os.path.join(a.dir, "port.tmp"), os.path.join(a.dir, "port"))
    end = time.monotonic() + a.seconds
    while state["n"] < a.requests and time.monotonic() < end:
        srv.handle_request()
    srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
