"""The optional webhook receiver: Telegram POSTs each update to a secret path; uvicorn serves it.

Long polling needs no public URL and is the default. With `telegram.webhook_url` set, the bot
registers that URL with a random secret token (new at every start) and listens on
`webhook_listen:webhook_port` behind the user's HTTPS reverse proxy. A request without the
secret header is refused (403); an update that fails with a Telegram error answers 500, so
Telegram delivers it again (the handled-update table makes that harmless).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import uvicorn

log = logging.getLogger(__name__)

MAX_BODY = 1024 * 1024
SECRET_HEADER = b"x-telegram-bot-api-secret-token"

Process = Callable[[dict[str, Any]], Awaitable[bool]]    # True = handled (or skipped), False = retry


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the worker's SIGTERM handling stays in charge."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """Install nothing; the worker handles SIGTERM and SIGINT."""
        yield


class WebhookReceiver:
    """A minimal ASGI app: POST <path> with the secret header and a JSON update."""

    def __init__(self, path: str, secret: str, process: Process, *, host: str, port: int) -> None:
        self.path = path
        self.secret = secret.encode()
        self.process = process
        self.host = host
        self.port = port
        self.server: _QuietServer | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve one ASGI request."""
        if scope["type"] != "http":
            return
        if scope["method"] != "POST" or scope["path"] != self.path:
            await self._reply(send, 404)
            return
        headers = dict(scope.get("headers") or [])
        if not hmac.compare_digest(headers.get(SECRET_HEADER, b""), self.secret):
            log.warning("telegram webhook: a request without the secret token was refused",
                        extra={"client": str((scope.get("client") or ("?",))[0])})
            await self._reply(send, 403)
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if len(body) > MAX_BODY:
                await self._reply(send, 413)
                return
            if not event.get("more_body"):
                break
        try:
            data = json.loads(body)
        except ValueError:
            await self._reply(send, 400)
            return
        if not isinstance(data, dict):
            await self._reply(send, 400)
            return
        await self._reply(send, 200 if await self.process(data) else 500)

    @staticmethod
    async def _reply(send: Any, status: int) -> None:
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})

    async def serve(self) -> None:
        """Listen until `stop()`."""
        config = uvicorn.Config(self, host=self.host, port=self.port, lifespan="off", access_log=False,
                                log_level="warning", log_config=None)
        self.server = _QuietServer(config)
        try:
            await self.server.serve()
        except SystemExit:
            # uvicorn exits the process when it cannot bind; here that is an error to retry.
            raise OSError(f"telegram webhook cannot listen on {self.host}:{self.port}") from None

    def stop(self) -> None:
        """Ask the server to finish."""
        if self.server is not None:
            self.server.should_exit = True
