/// The source of the HTTP server the transport tests run, independent of libcurl.
///
/// Kept in a Swift string rather than a `.py` file beside the tests, which SwiftPM would
/// report as an unhandled file of the test target.
enum TestHTTPServerScript {
  static let source = #"""
    #!/usr/bin/env python3
    """An HTTP server for the transport tests, independent of libcurl.

    Binds 127.0.0.1 on a port the kernel picks, prints the port on a line, and serves until
    its parent process goes away or two minutes pass, whichever comes first.

    Routes:
      /echo              the request as JSON: method, path, query, headers, body
      /status/N          status N with a short body
      /redirect          302 to /echo
      /declared?N        200 with Content-Length N, then N bytes (if the client still reads)
      /chunked?N         200 chunked, N bytes in 16 KiB chunks, without Content-Length
    """
    import json
    import os
    import sys
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    LIFETIME_SECONDS = 120


    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):
            pass

        def do_GET(self):
            self.route()

        do_POST = do_DELETE = do_PUT = do_PATCH = do_GET

        def route(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path, _, query = self.path.partition("?")
            if path == "/echo":
                echo = {
                    "method": self.command,
                    "path": path,
                    "query": query,
                    "headers": [[name, value] for name, value in self.headers.items()],
                    "body": body.decode("utf-8", "replace"),
                }
                self.reply(200, json.dumps(echo).encode(), [("Content-Type", "application/json")])
            elif path.startswith("/status/"):
                self.reply(int(path.split("/")[2]), b"status body", [("X-Test", "passed through")])
            elif path == "/redirect":
                self.reply(302, b"", [("Location", "/echo")])
            elif path == "/declared":
                self.stream(int(query), chunked=False)
            elif path == "/chunked":
                self.stream(int(query), chunked=True)
            else:
                self.reply(404, b"no such route", [])

        def reply(self, status, body, headers):
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def stream(self, size, chunked):
            self.send_response(200)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            sent = 0
            try:
                while sent < size:
                    piece = b"x" * min(16384, size - sent)
                    if chunked:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    else:
                        self.wfile.write(piece)
                    self.wfile.flush()
                    sent += len(piece)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # The client gave up, as it should.
            self.close_connection = True


    def watch_parent(parent):
        deadline = time.monotonic() + LIFETIME_SECONDS
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.2)
        os._exit(0)


    class Server(ThreadingHTTPServer):
        # The default backlog of 5 drops the SYNs of 20 concurrent clients, whose retry
        # comes after the 2 s connect timeout the tests use.
        request_queue_size = 128


    def main():
        server = Server(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
        print(server.server_address[1], flush=True)
        server.serve_forever()


    if __name__ == "__main__":
        main()
    """#
}
