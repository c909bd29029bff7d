"""A real HTTP server on a loopback address that serves saved pages, plus routes for failure cases.

Routes besides the files under `root`:
  /slow?s=N           wait N seconds before answering (bounded to 10)
  /drip?n=N&every=S   send N bytes, one every S seconds (a response that never quite stalls)
  /huge?kb=N          N KiB of body without Content-Length
  /huge-declared      a Content-Length far above any cap, then a little body
  /redirect?to=URL    302 to URL;  /loop  redirects to itself
  /flaky?fail=N&code=C   answers C (503) the first N times, then 200 (counted per server)
  /echo               the request headers as JSON
"""

from __future__ import annotations

import contextlib
import json
import mimetypes
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

MAX_WAIT = 10.0


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms delayed-ACK stalls

    def log_message(self, *_args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, content_type: str = "text/html", **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        owner = self.server.owner
        with owner.lock:
            owner.hits[parts.path] += 1
            owner.requests.append({"path": self.path, "headers": dict(self.headers.items())})
            hits = owner.hits[parts.path]
        route = getattr(self, "route_" + parts.path.strip("/").replace("-", "_"), None)
        if route is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                route(query, hits)
            return
        self.serve_file(parts.path)

    def serve_file(self, path: str) -> None:
        root = self.server.owner.root
        relative = path.lstrip("/") or "index.html"
        if relative.endswith("/"):
            relative += "index.html"
        target = (root / relative).resolve()
        if root.resolve() not in target.parents or not target.is_file():
            self._send(404, b"<h1>404 Not Found</h1>")
            return
        content_type = self.server.owner.content_types.get(
            relative, mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        )
        self._send(200, target.read_bytes(), content_type)

    # ---------------------------------------------------------------- failure routes
    def route_slow(self, query: dict[str, str], _hits: int) -> None:
        time.sleep(min(float(query.get("s", "3")), MAX_WAIT))
        self._send(200, b"<p>late</p>")

    def route_drip(self, query: dict[str, str], _hits: int) -> None:
        count, every = min(int(query.get("n", "50")), 200), min(float(query.get("every", "0.1")), 1.0)
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(count))
        self.end_headers()
        for _ in range(count):
            self.wfile.write(b"x")
            self.wfile.flush()
            time.sleep(every)

    def route_huge(self, query: dict[str, str], _hits: int) -> None:
        size = min(int(query.get("kb", "2048")), 64 * 1024) * 1024
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"<p>" + b"A" * 1017 + b"</p>\n"
        sent = 0
        while sent < size:
            self.wfile.write(chunk)
            sent += len(chunk)
        self.close_connection = True

    def route_huge_declared(self, _query: dict[str, str], _hits: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(10 * 1024 * 1024 * 1024))
        self.end_headers()
        self.wfile.write(b"<p>start of a very large page</p>")
        self.close_connection = True

    def route_redirect(self, query: dict[str, str], _hits: int) -> None:
        self._send(302, b"", Location=query.get("to", "/"))

    def route_loop(self, _query: dict[str, str], _hits: int) -> None:
        self._send(302, b"", Location="/loop")

    def route_flaky(self, query: dict[str, str], hits: int) -> None:
        if hits <= int(query.get("fail", "2")):
            self._send(int(query.get("code", "503")), b"busy", "text/plain", Retry_After="0")
            return
        self._send(200, b"<p>ok after retries</p>")

    def route_echo(self, _query: dict[str, str], _hits: int) -> None:
        self._send(200, json.dumps(dict(self.headers.items())).encode(), "application/json")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: SiteServer


class SiteServer:
    """Serve `root` on host:port (port 0 = any free one) in a background thread."""

    def __init__(self, root: Path, *, host: str = "127.0.0.1", content_types: dict[str, str] | None = None):
        self.root = root
        self.content_types = content_types or {}
        self.hits: Counter[str] = Counter()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = _Server((host, 0), _Handler)
        self.server.owner = self
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )

    @property
    def base(self) -> str:
        """http://host:port"""
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str = "/") -> str:
        """Absolute URL of a path on this server."""
        return self.base + path

    def __enter__(self) -> SiteServer:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
