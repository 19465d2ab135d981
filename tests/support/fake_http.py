"""A small threaded HTTP server for fakes (request log, scripted failures) and a loopback-only proxy.

`FakeHttpServer` subclasses implement `route(request) -> Reply`; every request is recorded in
`server.requests` (`LoggedRequest`: method, raw target, decoded path without the API prefix, query,
lower-cased headers, body, monotonic time). `server.script(status, ...)` makes the next matching
request(s) answer with a canned reply instead (429 with Retry-After, 500, ...).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the fake saw it."""

    method: str
    target: str                       # the raw request target (path and percent-encoded query)
    path: str                         # decoded path, without the server's API prefix
    query: dict[str, list[str]]
    headers: dict[str, str]           # lower-cased names
    body: bytes
    at: float                         # time.monotonic() on arrival

    def param(self, name: str) -> str | None:
        """The first value of a query parameter."""
        values = self.query.get(name)
        return values[0] if values else None

    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body or b"null")


@dataclass
class Reply:
    """What the fake answers: a status, a body (dict/list as JSON, str/bytes raw), headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Script:
    reply: Reply
    times: int
    path: str | None


class FakeHttpServer:
    """Base of the fakes: serves on 127.0.0.1 in a daemon thread, logs requests, plays scripts."""

    prefix = ""          # the API's path prefix, e.g. "/3" for TMDB

    def __init__(self) -> None:
        self.requests: list[LoggedRequest] = []
        self._scripts: list[_Script] = []
        self.outage: Reply | None = None     # while set, every request gets this reply (a down service)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self, port: int = 0) -> None:
        """Bind a loopback port (a free one by default; a given one to come back after an outage)."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._httpd is not None:
            shut_down(self._httpd)
            self._httpd = None

    @property
    def port(self) -> int:
        """The bound port."""
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def origin(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The API base URL a client is configured with (origin + prefix)."""
        return self.origin + self.prefix

    # ------------------------------------------------------------ scripting and assertions

    def script(
        self, status: int, body: Any = None, *, headers: dict[str, str] | None = None, times: int = 1,
        path: str | None = None,
    ) -> None:
        """Answer the next `times` requests (whose path starts with `path`, if given) with this reply."""
        with self._lock:
            self._scripts.append(_Script(Reply(status, body, dict(headers or {})), times, path))

    def rate_limit(self, retry_after: str | None = "1", *, times: int = 1, path: str | None = None) -> None:
        """Answer HTTP 429 (with Retry-After unless None) to the next `times` requests."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        self.script(429, {"message": "Too Many Requests"}, headers=headers, times=times, path=path)

    def calls(self, path: str | None = None, method: str | None = None) -> list[LoggedRequest]:
        """Logged requests, optionally only those on one path (exact) and/or method."""
        with self._lock:
            return [r for r in self.requests
                    if (path is None or r.path == path) and (method is None or r.method == method)]

    def clear(self) -> None:
        """Forget the request log."""
        with self._lock:
            self.requests.clear()

    def route(self, request: LoggedRequest) -> Reply:
        """Answer one request (subclasses)."""
        return Reply(404, {"message": "not found"})

    # ------------------------------------------------------------ internals

    def _take_script(self, path: str) -> Reply | None:
        with self._lock:
            if self.outage is not None:
                return self.outage
            for script in self._scripts:
                if script.path is None or path.startswith(script.path):
                    script.times -= 1
                    if script.times <= 0:
                        self._scripts.remove(script)
                    return script.reply
        return None

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(handler.path)
        path = unquote(parts.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        if self.prefix and path.startswith(self.prefix):
            path = path[len(self.prefix):] or "/"
        request = LoggedRequest(
            method=handler.command, target=handler.path, path=path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in handler.headers.items()}, body=body, at=time.monotonic(),
        )
        with self._lock:
            self.requests.append(request)
        reply = self._take_script(path)
        if reply is None:
            try:
                reply = self.route(request)
            except Exception as exc:  # a bug in the fake shows up as a 500 the test can read
                reply = Reply(500, {"fake_error": repr(exc)})
        _write(handler, reply)


def _write(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
    body = reply.body
    headers = dict(reply.headers)
    if isinstance(body, dict | list):
        data = json.dumps(body, ensure_ascii=False).encode()
        headers.setdefault("Content-Type", "application/json; charset=utf-8")
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = body or b""
    handler.send_response(reply.status)
    for name, value in headers.items():
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    if data and handler.command != "HEAD":
        handler.wfile.write(data)


def _handler(server: FakeHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            server._serve(self)

        do_POST = do_PUT = do_DELETE = do_HEAD = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


class LoopbackProxy(FakeHttpServer):
    """A plain-HTTP forward proxy that only forwards to 127.0.0.1/localhost; logs the URLs it relayed."""

    def route(self, request: LoggedRequest) -> Reply:
        """Forward an absolute-form request to a loopback origin (anything else is refused)."""
        url = urlsplit(request.target)
        if request.method == "CONNECT" or url.hostname not in ("127.0.0.1", "localhost"):
            return Reply(403, {"message": "this test proxy only forwards plain HTTP to loopback"})
        target = url.path + (f"?{url.query}" if url.query else "")
        hop = {"proxy-connection", "proxy-authorization", "connection", "keep-alive", "host",
               "content-length", "transfer-encoding"}
        conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=10)
        try:
            conn.request(request.method, target, body=request.body or None,
                         headers={k: v for k, v in request.headers.items() if k not in hop})
            answer = conn.getresponse()
            data = answer.read()
            headers = {k: v for k, v in answer.getheaders()
                       if k.lower() not in {"content-length", "transfer-encoding", "connection"}}
            return Reply(answer.status, data, headers)
        finally:
            conn.close()

    @property
    def relayed(self) -> list[str]:
        """The absolute URLs forwarded so far."""
        return [r.target for r in self.calls()]


def shut_down(httpd: socketserver.TCPServer) -> None:
    """Stop a serving loop and close its socket without waiting out the loop's poll interval.

    `shutdown()` returns once the loop looks at its flag, which it does when a connection wakes it or
    its poll interval ends; connections of our own (closed unread: no request, nothing logged) wake it.
    """
    waiting = threading.Thread(target=httpd.shutdown, daemon=True)
    waiting.start()
    while waiting.is_alive():
        with contextlib.suppress(OSError):
            socket.create_connection(httpd.server_address[:2], timeout=1).close()
        waiting.join(0.01)
    httpd.server_close()


@contextmanager
def running(server: FakeHttpServer) -> Iterator[FakeHttpServer]:
    """Start a fake for the duration of a with-block."""
    server.start()
    try:
        yield server
    finally:
        server.stop()
