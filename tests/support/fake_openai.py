"""A local HTTP server speaking the OpenAI chat-completions API, scripted per test.

The real `openai` client (and so `jellybit.adapters.llm.OpenAiLlm`) talks HTTP to it on loopback.
Use the function-scoped fixture `fake_openai`:

    def test_x(fake_openai):
        llm = OpenAiLlm(LlmConfig(enabled=True, base_url=fake_openai.base_url, model="m"))
        fake_openai.reply(llm_answer("movie", "Heat", 1995, [file_entry("f1", "video")]))
        answer = await llm.ask(question)
        assert fake_openai.requests[-1]["response_format"]["type"] == "json_schema"

Scripting (each chat request takes the next queued step; the rules below come first):
    base_url                         "http://127.0.0.1:PORT/v1"
    reply(content, finish_reason=)   queue one answer; a dict/list is JSON-encoded, a str sent as is
    reply_raw(status, body, content_type=)  queue any HTTP response (e.g. an HTML page)
    fail(status=500, message=)       queue an OpenAI-shaped error
    hang(seconds=None)               queue a request that waits (until teardown by default), to
                                     drive client timeouts; then it answers 504
    reject_json_schema(status=400, message=LLAMA_CPP_REJECTION)
                                     from now on every request with response_format json_schema
                                     gets this error, like llama.cpp / old Ollama (queue untouched)
    reject_json_object(status=400, message=)   the same for response_format json_object
    respond_with(fn)                 when the queue is empty: fn(request_body) -> str | dict | Step
    models                           list of ids GET /v1/models returns
    requests / headers               every chat request's decoded JSON body / lower-cased headers
    api_key                          when set, a request without `Authorization: Bearer <api_key>`
                                     (models too) gets OpenAI's 401 `{"error": {"code": "invalid_api_key"}}`
    user_message(i=-1), listed(i=-1) the user prompt of request i, and its file lines {id: label}
Nothing scripted: HTTP 500 "fake_openai: nothing scripted for this request".

Helpers: `llm_answer(media_type, title, year, files, ...)` and `file_entry(ref, role, ...)` build
an answer with every key the strict schema requires.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support.fake_http import shut_down

LLAMA_CPP_REJECTION = 'response_format type must be one of "text" or "json_object", but got: json_schema'
_LINE = re.compile(r"^(f\d+) \| [^|]* \| [^|]* \| (.*)$", re.MULTILINE)


@dataclass
class Step:
    """One scripted HTTP answer."""

    status: int = 200
    content: Any = None                  # the assistant message content (200 only)
    finish_reason: str = "stop"
    body: bytes | None = None            # raw body instead of a chat completion / error
    content_type: str = "application/json"
    message: str = ""                    # error message (non-200)
    delay: float | None = 0.0            # None = wait until teardown


def file_entry(ref: str, role: str = "video", *, season: int | None = None,
               episodes: list[int] | None = None, **extra: Any) -> dict[str, Any]:
    """One `files` entry with every key the strict schema requires."""
    entry = {"file": ref, "role": role, "season": season, "episodes": episodes or [], "part": None,
             "extra_kind": None, "language": None, "work_title": None, "work_year": None,
             "edition": None}
    entry.update(extra)
    return entry


def llm_answer(media_type: str | None, title: str | None, year: int | None,
               files: list[dict[str, Any]], *, original_title: str | None = None,
               notes: str | None = None) -> dict[str, Any]:
    """A whole answer in the strict schema's shape."""
    return {"media_type": media_type, "title": title, "original_title": original_title, "year": year,
            "files": files, "notes": notes}


@dataclass
class FakeOpenAI:
    """The scripted server's state; all methods are thread-safe."""

    base_url: str = ""
    models: list[str] = field(default_factory=lambda: ["fake-model"])
    api_key: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    _queue: deque[Step] = field(default_factory=deque)
    _rejections: dict[str, Step] = field(default_factory=dict)
    _responder: Callable[[dict[str, Any]], Any] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _released: threading.Event = field(default_factory=threading.Event)

    # ------------------------------------------------------------ scripting

    def reply(self, content: Any, *, finish_reason: str = "stop") -> None:
        """Queue one answer (dict/list JSON-encoded, str sent verbatim)."""
        self._push(Step(content=content, finish_reason=finish_reason))

    def reply_raw(self, status: int, body: bytes | str, content_type: str = "text/html") -> None:
        """Queue an arbitrary HTTP response."""
        raw = body.encode() if isinstance(body, str) else body
        self._push(Step(status=status, body=raw, content_type=content_type))

    def fail(self, status: int = 500, message: str = "internal error") -> None:
        """Queue an OpenAI-shaped error response."""
        self._push(Step(status=status, message=message))

    def hang(self, seconds: float | None = None) -> None:
        """Queue a request that is answered only after `seconds` (None: at teardown)."""
        self._push(Step(status=504, message="fake_openai: hung request released", delay=seconds))

    def reject_json_schema(self, status: int = 400, message: str = LLAMA_CPP_REJECTION) -> None:
        """Refuse every json_schema response_format from now on, as llama.cpp / old Ollama do."""
        with self._lock:
            self._rejections["json_schema"] = Step(status=status, message=message)

    def reject_json_object(self, status: int = 400,
                           message: str = "response_format json_object is not supported") -> None:
        """Refuse every json_object response_format from now on."""
        with self._lock:
            self._rejections["json_object"] = Step(status=status, message=message)

    def respond_with(self, responder: Callable[[dict[str, Any]], Any]) -> None:
        """Answer requests the queue does not cover with `responder(body)` (content or a Step)."""
        with self._lock:
            self._responder = responder

    # ------------------------------------------------------------ assertions

    def user_message(self, index: int = -1) -> str:
        """The user prompt of request `index`."""
        messages = self.requests[index]["messages"]
        return next(m["content"] for m in messages if m["role"] == "user")

    def system_message(self, index: int = -1) -> str:
        """The system prompt of request `index`."""
        messages = self.requests[index]["messages"]
        return next(m["content"] for m in messages if m["role"] == "system")

    def listed(self, index: int = -1) -> dict[str, str]:
        """The file lines of request `index`'s prompt: {line id: path label}."""
        return dict(_LINE.findall(self.user_message(index)))

    def format_types(self) -> list[str | None]:
        """The response_format type of every request, in order."""
        return [(r.get("response_format") or {}).get("type") for r in self.requests]

    # ------------------------------------------------------------ server side

    def _push(self, step: Step) -> None:
        with self._lock:
            self._queue.append(step)

    def _next(self, body: dict[str, Any]) -> Step:
        with self._lock:
            self.requests.append(body)
            kind = (body.get("response_format") or {}).get("type")
            if kind in self._rejections:
                return self._rejections[kind]
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is not None:
            result = responder(body)
            return result if isinstance(result, Step) else Step(content=result)
        return Step(status=500, message="fake_openai: nothing scripted for this request")


def _completion(step: Step, body: dict[str, Any], number: int) -> bytes:
    content = step.content
    if not isinstance(content, str | None):
        content = json.dumps(content, ensure_ascii=False)
    prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
    completion_tokens = len(content or "") // 4
    return json.dumps({
        "id": f"chatcmpl-fake{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake-model"),
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "logprobs": None, "finish_reason": step.finish_reason,
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": prompt_chars // 4, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_chars // 4 + completion_tokens},
    }, ensure_ascii=False).encode("utf-8")


def _key_refused(key: str) -> bytes:
    """OpenAI's answer to a wrong key (HTTP 401): the key shown masked, `code` invalid_api_key."""
    shown = f"{key[:3]}{'*' * max(len(key) - 7, 0)}{key[-4:]}" if len(key) > 8 else "*" * len(key)
    return json.dumps({"error": {
        "message": f"Incorrect API key provided: {shown}. You can find your API key at "
                   "https://platform.openai.com/account/api-keys.",
        "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}).encode("utf-8")


def _error(step: Step) -> bytes:
    kind = "invalid_request_error" if step.status < 500 else "server_error"
    return json.dumps({"error": {"code": step.status, "message": step.message, "type": kind,
                                 "param": None}}).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass                     # the client gave up (timeout); nothing to tell it

    def _refused(self) -> bool:
        """Answer 401 when the fake wants a key and the request does not carry it."""
        wanted = self.server.fake.api_key
        given = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if wanted is None or given == wanted:
            return False
        self._send(401, _key_refused(given))
        return True

    def do_GET(self) -> None:
        """GET /v1/models."""
        if self._refused():
            return
        if self.path.rstrip("/").endswith("/models"):
            fake = self.server.fake
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in fake.models]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, _error(Step(status=404, message=f"no route {self.path}")))

    def do_POST(self) -> None:
        """POST /v1/chat/completions."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, _error(Step(status=404, message=f"no route {self.path}")))
            return
        if self._refused():
            return
        fake = self.server.fake
        body = json.loads(raw.decode("utf-8"))
        with fake._lock:
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
        step = fake._next(body)
        number = len(fake.requests)
        if step.delay is None or step.delay > 0:
            fake._released.wait(step.delay)
        if step.body is not None:
            self._send(step.status, step.body, step.content_type)
        elif step.status == 200:
            self._send(200, _completion(step, body, number))
        else:
            self._send(step.status, _error(step))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAI

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connections the client dropped are normal here (timeouts)."""


def start_fake_openai() -> tuple[FakeOpenAI, Callable[[], None]]:
    """Start a server on a free loopback port; returns it and the function that stops it."""
    fake = FakeOpenAI()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = fake
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop() -> None:
        fake._released.set()
        shut_down(server)
        thread.join(5)

    return fake, stop


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A scripted OpenAI-compatible server for one test."""
    fake, stop = start_fake_openai()
    try:
        yield fake
    finally:
        stop()
