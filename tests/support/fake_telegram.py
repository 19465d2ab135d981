"""A local Telegram Bot API speaking the real shapes, for python-telegram-bot pointed at it by base URL.

Fixture `fake_telegram` -> `FakeTelegram` (started on 127.0.0.1). Paths are the real ones:
`/bot<token>/<method>` (form-encoded or JSON parameters, `{"ok": true, "result": …}` or
`{"ok": false, "error_code", "description", "parameters"}`) and `/file/bot<token>/<file_path>`.
Methods: getMe, deleteWebhook, setWebhook, setMyCommands, getUpdates (long polling; an update
is confirmed and forgotten once a call's `offset` passes it), sendMessage, sendPhoto,
editMessageText, editMessageCaption, editMessageReplyMarkup, answerCallbackQuery, getFile.
Like Telegram it refuses what it would refuse: bad HTML, texts over 4096 and captions over
1024 characters, callback data over 64 bytes, URL buttons to hosts in `refuse_url_hosts`,
photos in `unreachable_photos`, chats in `blocked_chats` (403), an edit that changes nothing.

Test side: `user(…)`, `send_text(…)`, `send_document(…)`, `press(…)` push updates; `push(u)`
delivers an update again; `outbox(chat)` lists what the bot sent; `answers` the callback answers;
`await until(predicate)` waits. `rate_limit(...)`/`script(...)` and `outage` come from FakeHttpServer;
`stop()` then `start(port)` is a network loss and return on the same port.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support import polling
from tests.support.fake_http import FakeHttpServer, LoggedRequest, Reply

TOKEN = "4242424242:AAfake-Telegram-token_for-tests"
BOT_USER = {"id": 4242424242, "is_bot": True, "first_name": "Jellybit", "username": "jellybit_test_bot"}
JSON_FIELDS = {"reply_markup", "allowed_updates", "reply_parameters", "link_preview_options", "commands",
               "entities", "caption_entities"}
TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "tg-spoiler",
        "span", "blockquote", "tg-emoji"}


class ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.parameters = code, description, parameters


class _Html(HTMLParser):
    """Telegram's HTML: a few tags, entities; anything else is "can't parse entities"."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.open: list[str] = []
        self.error: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in TAGS:
            self.error = self.error or f'Unsupported start tag "{tag}"'
        self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open.pop() != tag:
            self.error = self.error or f'Unexpected end tag "{tag}"'

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def plain_text(text: str, parse_mode: str | None) -> str:
    """The text a chat shows (HTML parsed like Telegram); ApiError 400 for HTML Telegram refuses."""
    if (parse_mode or "").upper() != "HTML":
        return text
    parser = _Html()
    parser.feed(text)
    parser.close()
    if parser.open and not parser.error:
        parser.error = f'Can\'t find end tag corresponding to start tag "{parser.open[-1]}"'
    if parser.error:
        raise ApiError(400, f"Bad Request: can't parse entities: {parser.error}")
    return "".join(parser.text)


def utf16(text: str) -> int:
    """Telegram's length of a text."""
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Sent:
    """One message the bot sent (and its current state after edits)."""

    method: str
    chat_id: int
    message: dict[str, Any]
    params: dict[str, Any]
    edits: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The shown text or caption as it is now."""
        return self.message.get("text") or self.message.get("caption") or ""

    @property
    def buttons(self) -> list[dict[str, Any]]:
        """Every inline button as it is now (empty once an edit removed them)."""
        markup = self.message.get("reply_markup") or {}
        return [b for row in markup.get("inline_keyboard", []) for b in row]

    def button(self, label: str) -> dict[str, Any]:
        """The button whose text starts with `label`."""
        found = [b for b in self.buttons if b["text"].startswith(label)]
        assert found, f"no button {label!r} in {[b['text'] for b in self.buttons]}"
        return found[0]


class FakeTelegram(FakeHttpServer):
    """The Bot API of one bot, with its chats, files and update queue in memory."""

    def __init__(self, token: str = TOKEN) -> None:
        super().__init__()
        self.token = token
        self._cond = threading.Condition(self._lock)
        self._pending: list[dict[str, Any]] = []
        self._update_ids = itertools.count(500)
        self._message_ids = itertools.count(1)
        self._ids = itertools.count(1)
        self.sent: list[Sent] = []
        self.answers: list[dict[str, Any]] = []
        self.files: dict[str, tuple[str, bytes]] = {}
        self.webhook: dict[str, Any] | None = None
        self.commands: list[dict[str, Any]] = []
        self.refuse_url_hosts: set[str] = {"localhost"}
        self.unreachable_photos: set[str] = set()
        self.blocked_chats: set[int] = set()
        self.confirmed_below = 0
        self._port: int | None = None
        self._down = False

    # ------------------------------------------------------------ lifecycle

    def start(self, port: int = 0) -> None:
        """Serve on a free port, or on the port of the last run (back after a network loss)."""
        super().start(port or self._port or 0)
        self._port = self.port
        self._down = False
        httpd = self._httpd
        assert httpd is not None
        default = httpd.handle_error

        def quiet(request: Any, client_address: Any) -> None:
            # The bot cancels its long poll when it stops: a broken pipe here is expected.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                default(request, client_address)

        httpd.handle_error = quiet  # type: ignore[method-assign]

    def stop(self) -> None:
        """A network loss: no new connections, and open keep-alive connections are reset."""
        self._down = True
        with self._cond:
            self._cond.notify_all()
        super().stop()

    def _serve(self, handler: Any) -> None:
        if self._down:
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        super()._serve(handler)

    # ------------------------------------------------------------ test side

    @staticmethod
    def user(user_id: int, first_name: str = "Anna", username: str | None = None,
             last_name: str | None = None) -> dict[str, Any]:
        """A Telegram user."""
        data: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
        if username:
            data["username"] = username
        if last_name:
            data["last_name"] = last_name
        return data

    def push(self, update: dict[str, Any]) -> dict[str, Any]:
        """Deliver an update (again, if it was delivered before: Telegram re-sends unconfirmed ones)."""
        with self._cond:
            self._pending.append(update)
            self._pending.sort(key=lambda u: u["update_id"])
            self._cond.notify_all()
        return update

    def _message(self, user: dict[str, Any], **fields: Any) -> dict[str, Any]:
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        return {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat, "from": user,
                **{k: v for k, v in fields.items() if v is not None}}

    def send_text(self, user: dict[str, Any], text: str, *, entities: list[dict[str, Any]] | None = None,
                  reply_to: dict[str, Any] | None = None, forward_from: dict[str, Any] | None = None
                  ) -> dict[str, Any]:
        """A user writes (or forwards) a text message to the bot."""
        origin = None
        if forward_from:
            origin = {"type": "user", "date": int(time.time()), "sender_user": forward_from}
        message = self._message(user, text=text, entities=entities, reply_to_message=reply_to,
                                forward_origin=origin)
        return self.push({"update_id": next(self._update_ids), "message": message})

    def send_document(self, user: dict[str, Any], data: bytes, file_name: str, *, caption: str | None = None,
                      mime_type: str = "application/x-bittorrent", size: int | None = None) -> dict[str, Any]:
        """A user sends a file (stored here so getFile and the download path serve it)."""
        number = next(self._ids)
        file_id = f"BQACAgIAAxkBAAI{number:06d}"
        self.files[file_id] = (f"documents/file_{number}.torrent", data)
        document = {"file_id": file_id, "file_unique_id": f"AgAD{number:06d}", "file_name": file_name,
                    "mime_type": mime_type, "file_size": len(data) if size is None else size}
        message = self._message(user, document=document, caption=caption)
        return self.push({"update_id": next(self._update_ids), "message": message})

    def press(self, user: dict[str, Any], sent: Sent, label: str) -> dict[str, Any]:
        """A user presses an inline button of a message the bot sent."""
        button = sent.button(label)
        query = {"id": str(next(self._ids) + 10**12), "from": user, "message": sent.message,
                 "chat_instance": "-42", "data": button["callback_data"]}
        return self.push({"update_id": next(self._update_ids), "callback_query": query})

    def outbox(self, chat_id: int | None = None, method: str | None = None) -> list[Sent]:
        """What the bot sent, oldest first."""
        with self._lock:
            return [s for s in self.sent if (chat_id is None or s.chat_id == chat_id)
                    and (method is None or s.method == method)]

    async def until(self, predicate: Callable[[], Any], within: float = 15.0) -> Any:
        """Wait (without blocking the event loop) until `predicate()` is truthy; fail at the deadline."""
        return await polling.until(predicate, within=within, interval=0.02, what=lambda: (
            f"the fake Telegram's condition (the bot sent {[s.text for s in self.outbox()]})"))

    @property
    def pending(self) -> int:
        """Updates not yet confirmed by the bot."""
        with self._lock:
            return len(self._pending)

    # ------------------------------------------------------------ serving

    def route(self, request: LoggedRequest) -> Reply:
        """Answer one Bot API request."""
        prefix = f"/file/bot{self.token}/"
        if request.path.startswith(prefix):
            wanted = request.path[len(prefix):]
            for path, data in self.files.values():
                if path == wanted:
                    return Reply(200, data, {"Content-Type": "application/octet-stream"})
            return Reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        parts = request.path.split("/")
        if len(parts) != 3 or not parts[1].startswith("bot"):
            return Reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        if parts[1][3:] != self.token:
            return Reply(401, {"ok": False, "error_code": 401, "description": "Unauthorized"})
        handler = getattr(self, f"_m_{parts[2]}", None)
        if handler is None:
            return Reply(404, {"ok": False, "error_code": 404, "description": "Not Found"})
        try:
            return Reply(200, {"ok": True, "result": handler(self._params(request))})
        except ApiError as exc:
            body: dict[str, Any] = {"ok": False, "error_code": exc.code, "description": exc.description}
            if exc.parameters:
                body["parameters"] = exc.parameters
            return Reply(exc.code, body)

    @staticmethod
    def _params(request: LoggedRequest) -> dict[str, Any]:
        kind = request.headers.get("content-type", "")
        if "json" in kind:
            values = dict(request.json() or {})
        else:
            query = parse_qs(request.body.decode(), keep_blank_values=True) if request.body else request.query
            values = {k: v[0] for k, v in query.items()}
        for key in JSON_FIELDS & set(values):
            if isinstance(values[key], str):
                values[key] = json.loads(values[key])
        return values

    # ------------------------------------------------------------ methods

    def _m_getMe(self, p: dict[str, Any]) -> Any:
        return BOT_USER

    def _m_deleteWebhook(self, p: dict[str, Any]) -> Any:
        self.webhook = None
        return True

    def _m_setWebhook(self, p: dict[str, Any]) -> Any:
        self.webhook = p
        return True

    def _m_setMyCommands(self, p: dict[str, Any]) -> Any:
        self.commands = list(p.get("commands") or [])
        return True

    def _m_getUpdates(self, p: dict[str, Any]) -> Any:
        if self.webhook:
            raise ApiError(409, "Conflict: can't use getUpdates method while webhook is active; "
                                "use deleteWebhook to delete the webhook first")
        offset = int(p.get("offset") or 0)
        deadline = time.monotonic() + min(float(p.get("timeout") or 0), 10.0)
        with self._cond:
            if offset:
                self.confirmed_below = max(self.confirmed_below, offset)
                self._pending = [u for u in self._pending if u["update_id"] >= offset]
            while not self._pending and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return list(self._pending[: int(p.get("limit") or 100)])

    def _chat(self, p: dict[str, Any]) -> int:
        chat_id = int(p["chat_id"])
        if chat_id in self.blocked_chats:
            raise ApiError(403, "Forbidden: bot was blocked by the user")
        return chat_id

    def _markup(self, p: dict[str, Any]) -> dict[str, Any] | None:
        markup = p.get("reply_markup")
        for row in (markup or {}).get("inline_keyboard", []):
            for button in row:
                data = button.get("callback_data")
                if data is not None and not 1 <= len(data.encode()) <= 64:
                    raise ApiError(400, "Bad Request: BUTTON_DATA_INVALID")
                if "url" in button and (urlsplit(button["url"]).hostname or "") in self.refuse_url_hosts:
                    raise ApiError(400, "Bad Request: BUTTON_URL_INVALID")
        return markup

    def _record(self, method: str, chat_id: int, p: dict[str, Any], **fields: Any) -> dict[str, Any]:
        chat = {"id": chat_id, "type": "private", "first_name": "Anna"}
        message = {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat,
                   "from": BOT_USER, **{k: v for k, v in fields.items() if v is not None}}
        with self._lock:
            self.sent.append(Sent(method, chat_id, message, p))
        return message

    def _m_sendMessage(self, p: dict[str, Any]) -> Any:
        chat_id = self._chat(p)
        text = plain_text(p.get("text") or "", p.get("parse_mode"))
        if not text.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if utf16(text) > 4096:
            raise ApiError(400, "Bad Request: message is too long")
        return self._record("sendMessage", chat_id, p, text=text, reply_markup=self._markup(p))

    def _m_sendPhoto(self, p: dict[str, Any]) -> Any:
        chat_id = self._chat(p)
        caption = plain_text(p.get("caption") or "", p.get("parse_mode"))
        if utf16(caption) > 1024:
            raise ApiError(400, "Bad Request: message caption is too long")
        if p.get("photo") in self.unreachable_photos:
            raise ApiError(400, "Bad Request: wrong type of the web page content")
        photo = [{"file_id": f"AgACAgIAAx{next(self._ids)}", "file_unique_id": "AQAD", "width": 342,
                  "height": 513}]
        return self._record("sendPhoto", chat_id, p, photo=photo, caption=caption,
                            reply_markup=self._markup(p))

    def _find(self, p: dict[str, Any]) -> Sent:
        chat_id, message_id = int(p["chat_id"]), int(p["message_id"])
        with self._lock:
            for sent in self.sent:
                if sent.chat_id == chat_id and sent.message["message_id"] == message_id:
                    return sent
        raise ApiError(400, "Bad Request: message to edit not found")

    def _edit(self, sent: Sent, p: dict[str, Any], **changes: Any) -> Any:
        markup = self._markup(p)
        new = {**sent.message, **changes}
        if markup is None:
            new.pop("reply_markup", None)
        else:
            new["reply_markup"] = markup
        if new == sent.message:
            raise ApiError(400, "Bad Request: message is not modified: specified new message content and "
                                "reply markup are exactly the same as a current content and reply markup "
                                "of the message")
        with self._lock:
            sent.edits.append(p)
            sent.message = new
        return new

    def _m_editMessageText(self, p: dict[str, Any]) -> Any:
        sent = self._find(p)
        if "photo" in sent.message:
            raise ApiError(400, "Bad Request: there is no text in the message to edit")
        return self._edit(sent, p, text=plain_text(p.get("text") or "", p.get("parse_mode")))

    def _m_editMessageCaption(self, p: dict[str, Any]) -> Any:
        sent = self._find(p)
        caption = plain_text(p.get("caption") or "", p.get("parse_mode"))
        if utf16(caption) > 1024:
            raise ApiError(400, "Bad Request: message caption is too long")
        return self._edit(sent, p, caption=caption)

    def _m_editMessageReplyMarkup(self, p: dict[str, Any]) -> Any:
        return self._edit(self._find(p), p)

    def _m_answerCallbackQuery(self, p: dict[str, Any]) -> Any:
        if len(p.get("text") or "") > 200:
            raise ApiError(400, "Bad Request: MESSAGE_TOO_LONG")
        with self._lock:
            self.answers.append(p)
        return True

    def _m_getFile(self, p: dict[str, Any]) -> Any:
        found = self.files.get(p.get("file_id", ""))
        if found is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        path, data = found
        if len(data) > 20 * 1024 * 1024:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": p["file_id"], "file_unique_id": "AgAD", "file_size": len(data), "file_path": path}


@pytest.fixture
def fake_telegram() -> Iterator[FakeTelegram]:
    """A started fake Bot API, stopped after the test."""
    server = FakeTelegram()
    server.start()
    try:
        yield server
    finally:
        with server._cond:
            server._cond.notify_all()
        server.stop()
