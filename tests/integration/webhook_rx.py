"""A webhook receiver for the tests: appends every POST's body (one JSON
document per line) to OUT; answers 500 while the file FAIL exists, else
200. Run in the coordinator's namespace: webhook_rx.py PORT OUT [FAIL]."""

import http.server
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        fail = len(sys.argv) > 3 and os.path.exists(sys.argv[3])
        with open(sys.argv[2], "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(500 if fail else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    srv = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    srv.serve_forever()


if __name__ == "__main__":
    main()
