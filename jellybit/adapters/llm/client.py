"""The LLM adapter: any OpenAI-compatible chat-completions server (Ollama, llama.cpp, LM Studio, OpenAI)."""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai import AsyncOpenAI
from pydantic import ValidationError

from jellybit.adapters.llm.answer import ANSWER_SCHEMA, validate_answer
from jellybit.config import LlmConfig
from jellybit.core.ports import LlmAnswer, LlmQuestion
from jellybit.core.prompt import Prompt, build_prompt
from jellybit.errors import AdapterError

log = logging.getLogger(__name__)

SYSTEM = "llm"
# Output modes, strongest first: a strict JSON schema, then plain JSON mode with the schema in the
# prompt, then no response_format at all (the schema in the prompt, JSON picked out of the text).
MODES = ("json_schema", "json_object", "prompt")
_FORMAT_WORDS = ("response_format", "response format", "json_schema", "json_object", "schema", "grammar")
_FALLBACK_STATUSES = {400, 404, 422, 500, 501}
_THINK = re.compile(r"^\s*<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL | re.IGNORECASE)
NO_KEY = "no-key"                # local servers ignore the key, but the client insists on one


class LlmKeyRefused(AdapterError):
    """The LLM server refused the API key (HTTP 401/403)."""


class _FormatRejected(Exception):
    """The server refused the response_format of this mode."""


def _response_format(mode: str) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": "jellybit_recognition", "strict": True, "schema": ANSWER_SCHEMA}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _public_url(url: str) -> str:
    """The base URL without user:password@."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


def decode_json(content: str) -> Any:
    """Decode the model's text as JSON, tolerating a <think> block and ``` fences; raises ValueError."""
    text = _THINK.sub("", content, count=1).strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        return json.loads(text)
    except ValueError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise
        return json.loads(text[start:end + 1])


def _root_cause(exc: BaseException) -> str:
    """The most specific reason in an exception chain (e.g. the OS's "Connection refused")."""
    found = ""
    seen: BaseException | None = exc.__cause__ or exc.__context__
    for _ in range(10):
        if seen is None:
            break
        if isinstance(seen, OSError) and (seen.errno or seen.strerror):
            return os.strerror(seen.errno) if seen.errno else str(seen.strerror)
        found = str(seen) or found
        seen = seen.__cause__ or seen.__context__
    return found


class OpenAiLlm:
    """`LlmClient` over the openai client; remembers which structured-output mode the server takes."""

    def __init__(self, config: LlmConfig, *, max_retries: int = 1) -> None:
        key = config.api_key.get_secret_value() if config.api_key else ""
        password = urlsplit(config.base_url).password
        self._secrets = tuple(s for s in (key, password) if s)
        self._config = config
        self._url = _public_url(config.base_url)
        self._client = AsyncOpenAI(base_url=config.base_url, api_key=key or NO_KEY,
                                   timeout=config.timeout, max_retries=max_retries)
        self._mode = 0

    def __repr__(self) -> str:
        return f"OpenAiLlm(base_url={self._url!r}, model={self._config.model!r}, mode={self.mode!r})"

    @property
    def mode(self) -> str:
        """The structured-output mode the next request uses."""
        return MODES[self._mode]

    async def close(self) -> None:
        """Release the HTTP client."""
        await self._client.close()

    async def ask(self, question: LlmQuestion) -> LlmAnswer:
        """Ask the model about one download and return its validated answer (AdapterError on failure)."""
        while True:
            index = self._mode
            mode = MODES[index]
            prompt = build_prompt(question, max_files=self._config.max_prompt_files,
                                  answer_schema=None if mode == "json_schema" else ANSWER_SCHEMA)
            try:
                content = await self._complete(prompt, mode)
            except _FormatRejected as exc:
                if index + 1 >= len(MODES):
                    raise AdapterError(SYSTEM, f"the server rejected the request: {exc}") from None
                self._fall_back(index, f"the server rejected response_format {mode}: {exc}")
                continue
            try:
                data = decode_json(content)
            except ValueError:
                if mode == "json_schema":
                    self._fall_back(index, "the server ignored response_format json_schema (answer not JSON)")
                    continue
                raise AdapterError(SYSTEM, f"the model's answer is not JSON (mode {mode}): "
                                   f"{self._scrub(content[:120])!r}") from None
            try:
                return validate_answer(data, content, prompt.listing)
            except ValidationError as exc:
                raise AdapterError(SYSTEM, "the model's answer does not match the expected schema: "
                                   f"{self._describe(exc)}") from None

    async def ping(self) -> str:
        """Check the server for the status page: a sentence on what it offers, or AdapterError."""
        try:
            page = await self._client.models.list()
        except openai.NotFoundError:
            return f"reachable at {self._url} (no model list)"
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        ids = sorted(str(getattr(m, "id", "")) for m in getattr(page, "data", []) or [])
        if self._config.model in ids:
            return f"reachable at {self._url}; model {self._config.model} available"
        offered = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "") if ids else "none"
        return (f"reachable at {self._url}; model {self._config.model} not listed "
                f"(server lists: {self._scrub(offered)})")

    def _fall_back(self, index: int, why: str) -> None:
        if self._mode <= index:
            self._mode = index + 1
            log.warning("LLM structured output falls back to %s: %s", MODES[self._mode], self._scrub(why))

    async def _complete(self, prompt: Prompt, mode: str) -> str:
        kwargs: dict[str, Any] = {"model": self._config.model, "messages": prompt.messages(),
                                  "temperature": 0}
        response_format = _response_format(mode)
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            response = await self._client.chat.completions.create(**kwargs)
        except openai.APIStatusError as exc:
            detail = self._detail(exc)
            if (mode != "prompt" and exc.status_code in _FALLBACK_STATUSES
                    and any(word in detail.lower() for word in _FORMAT_WORDS)):
                raise _FormatRejected(f"HTTP {exc.status_code}: {detail}") from None
            raise self._error(exc) from None
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        try:
            choice = response.choices[0]
            content = choice.message.content
            finish = choice.finish_reason
        except (AttributeError, IndexError, TypeError, KeyError):
            raise AdapterError(SYSTEM, f"the server at {self._url} did not send a chat completion "
                               "(is base_url an OpenAI-compatible /v1 endpoint?)") from None
        if finish == "length":
            raise AdapterError(SYSTEM, "the answer was cut off at the model's token limit "
                               "(finish_reason=length); use a model with a larger context")
        refusal = getattr(choice.message, "refusal", None)
        if not content and refusal:
            raise AdapterError(SYSTEM, f"the model refused to answer: {self._scrub(str(refusal)[:200])}")
        return content if isinstance(content, str) else ""

    def _error(self, exc: openai.OpenAIError) -> AdapterError:
        """One sentence for any client failure; never the key."""
        if isinstance(exc, openai.APITimeoutError):
            message = f"the server at {self._url} did not answer within {self._config.timeout:g} s"
        elif isinstance(exc, openai.APIConnectionError):
            why = self._scrub(_root_cause(exc))[:200]
            message = f"cannot reach the server at {self._url}" + (f" ({why})" if why else "")
        elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return LlmKeyRefused(SYSTEM, f"the server at {self._url} refused the API key "
                                 f"(HTTP {exc.status_code})")
        elif isinstance(exc, openai.APIStatusError):
            message = f"the server at {self._url} answered HTTP {exc.status_code}: {self._detail(exc)}"
        else:
            message = (f"unexpected answer from the server at {self._url}: "
                       f"{type(exc).__name__}: {self._scrub(str(exc))[:200]}")
        return AdapterError(SYSTEM, message)

    def _detail(self, exc: openai.APIStatusError) -> str:
        body = exc.body
        text: Any = body.get("message") if isinstance(body, dict) else body
        if not text:
            try:
                text = exc.response.text
            except Exception:          # a streamed or closed body: the status code has to do
                text = ""
        text = " ".join(str(text).split())
        return self._scrub(text[:300]) or "no details"

    def _describe(self, exc: ValidationError) -> str:
        parts = []
        for item in exc.errors()[:3]:
            where = ".".join(str(p) for p in item["loc"]) or "answer"
            parts.append(f"{where}: {item['msg']}")
        return self._scrub("; ".join(parts))

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text
