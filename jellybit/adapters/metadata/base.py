"""Shared HTTP plumbing of the metadata providers: client, retries, errors, cache, text hygiene."""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import ssl
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlencode

import certifi
import httpx
from pydantic import BaseModel, ValidationError

from jellybit import __version__
from jellybit.adapters.metadata.cache import ResponseCache
from jellybit.core.countries import country_code
from jellybit.core.records import MediaType
from jellybit.errors import AdapterError, ConfigError, InvalidArgument

log = logging.getLogger(__name__)

USER_AGENT = f"Jellybit/{__version__}"
MAX_QUERY_CHARS = 200
M = TypeVar("M", bound=BaseModel)


class MetadataAuthError(AdapterError):
    """The provider rejected the credentials (HTTP 401/403)."""

    transient = False


class MetadataNotFound(AdapterError):
    """The provider has no record under that id (HTTP 404)."""

    transient = False


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: total attempts, the longest wait accepted, the base backoff."""

    attempts: int = 3
    max_wait: float = 30.0       # a Retry-After beyond this fails at once instead of stalling recognition
    backoff: float = 1.0         # first wait after a 5xx / connection error / 429 without Retry-After


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Parse a Retry-After header (delta seconds or an HTTP date) into seconds from now."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


_SECRET_PARAM = re.compile(r"(?i)\b(api_key|apikey|apiKey|token|pin)=[^&\s\"']+")


class _RedactSecrets(logging.Filter):
    """httpx logs request URLs; TMDB v3 keys travel as `api_key=` in them."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET_PARAM.sub(r"\1=***", message)
        if redacted != message:
            record.msg, record.args = redacted, ()
        return True


def _install_redaction() -> None:
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, _RedactSecrets) for f in logger.filters):
        logger.addFilter(_RedactSecrets())


_install_redaction()


def required_secret(secret: Any, provider: str) -> str:
    """The provider's API key, or a ConfigError naming the key and its environment variable."""
    value = secret.get_secret_value() if secret else ""
    if not value:
        raise ConfigError(f"metadata.{provider} is enabled but has no api_key "
                          f"(set it or JELLYBIT_METADATA_{provider.upper()}_API_KEY)")
    return value


def provider_text(value: object, limit: int = 500) -> str | None:
    """Normalize untrusted provider text: NFC, no control characters, collapsed spaces, clipped."""
    if value is None:
        return None
    text = unicodedata.normalize("NFC", str(value))
    text = "".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text)
    text = " ".join(text.split())
    return text[:limit] or None


def clean_query(value: str | None) -> str | None:
    """A search string as sent: cleaned like provider text and bounded in length."""
    return provider_text(value, MAX_QUERY_CHARS)


def safe_url(value: object) -> str | None:
    """Keep a provider-given URL only if it is plain http(s) without spaces or quotes."""
    text = str(value or "").strip()
    if re.fullmatch(r"https?://[^\s\"'<>]+", text):
        return text
    return None


def year_of(value: object) -> int | None:
    """The year of `2014`, `"2014"` or `"2014-04-15"`; None otherwise."""
    match = re.match(r"^\s*(\d{4})", str(value or ""))
    if not match:
        return None
    year = int(match.group(1))
    return year if 1870 <= year <= 2200 else None


def numeric_id(provider: str, value: object, prefix: str = "") -> str:
    """Validate a provider id (digits only) so it can go into a URL path; else InvalidArgument."""
    text = str(value).strip()
    if prefix and text.startswith(prefix):
        text = text[len(prefix):]
    if not re.fullmatch(r"\d{1,12}", text):
        raise InvalidArgument(f"{provider} ids are numbers, got {str(value)[:40]!r}")
    return text.lstrip("0") or "0"


def media_type_of(value: str) -> MediaType:
    """Parse a media type argument (`movie` | `series`) or raise InvalidArgument."""
    try:
        return MediaType(value)
    except ValueError:
        raise InvalidArgument(f"media type must be movie or series, got {str(value)[:40]!r}") from None


def unique_texts(values: Any) -> list[str]:
    """Clean, deduplicate (case-insensitively) and keep the order of a list of names."""
    seen: set[str] = set()
    result: list[str] = []
    for value in values:
        text = provider_text(value)
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            result.append(text)
    return result


_LANGUAGES = {
    "eng": "en", "english": "en", "rus": "ru", "russian": "ru", "ukr": "uk", "ukrainian": "uk",
    "deu": "de", "ger": "de", "german": "de", "fra": "fr", "fre": "fr", "french": "fr",
    "spa": "es", "spanish": "es", "ita": "it", "italian": "it", "jpn": "ja", "japanese": "ja",
    "kor": "ko", "korean": "ko", "zho": "zh", "chi": "zh", "chinese": "zh", "por": "pt",
    "portuguese": "pt", "pol": "pl", "polish": "pl", "swe": "sv", "swedish": "sv", "dan": "da",
    "danish": "da", "nor": "no", "norwegian": "no", "fin": "fi", "finnish": "fi", "nld": "nl",
    "dut": "nl", "dutch": "nl", "tur": "tr", "turkish": "tr", "hin": "hi", "hindi": "hi",
}


def language_code(value: object) -> str | None:
    """ISO 639-1 where known (`eng`, `English` -> `en`); other values lowercased as given."""
    text = provider_text(value, 40)
    if not text:
        return None
    lowered = text.lower()
    return _LANGUAGES.get(lowered, lowered)


def country_codes(values: Any) -> list[str]:
    """Provider country codes (`US`, TVDB's `usa`, `UK`) as ISO 3166-1 alpha-2, deduplicated, in order."""
    found = (country_code(provider_text(v, 60)) for v in values or ())
    return list(dict.fromkeys(c for c in found if c))


def country_details(codes: list[str]) -> dict[str, Any]:
    """`{"country": first, "countries": all}` for a candidate's details, or nothing when unknown."""
    return {"country": codes[0], "countries": codes} if codes else {}


def cache_key(provider: str, method: str, path: str, params: Mapping[str, Any] | None) -> str:
    """provider + method + path + normalized params; credentials are never part of it."""
    pairs: list[tuple[str, str]] = []
    for name, value in sorted((params or {}).items()):
        values = value if isinstance(value, list | tuple) else [value]
        for item in values:
            if item is not None:
                text = unicodedata.normalize("NFC", str(item))
                pairs.append((name, " ".join(text.split()).casefold()))
    return f"{provider} {method} {path}?{urlencode(pairs)}"


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One verifying TLS context for every provider (building one per client costs ~20 ms)."""
    return ssl.create_default_context(cafile=certifi.where())


REASON_CHARS = 120


def provider_reason(response: httpx.Response) -> str:
    """The provider's own words for a refusal (TVDB's `message`, TMDB's `status_message`), bounded
    and printable; '' when the body says nothing readable."""
    try:
        body = response.json()
    except ValueError:
        return ""
    said = body.get("message") or body.get("status_message") if isinstance(body, dict) else None
    if not isinstance(said, str):
        return ""
    text = " ".join("".join(c for c in said if c.isprintable()).split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS - 1] + "…"


class ApiClient:
    """One provider's HTTP client: base URL, proxy, timeout, User-Agent, retries, cache, errors."""

    def __init__(
        self,
        provider: str,
        base_url: str,
        *,
        timeout: float,
        proxy: str | None = None,
        headers: Mapping[str, str] | None = None,
        secret_params: Mapping[str, str] | None = None,
        cache: ResponseCache | None = None,
        policy: RetryPolicy | None = None,
    ) -> None:
        self.provider = provider
        self.policy = policy or RetryPolicy()
        self.cache = cache
        self._secret_params = dict(secret_params or {})
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            proxy=proxy or None,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})},
            follow_redirects=True,
            verify=tls_context(),
        )
        self._timeout = timeout

    async def close(self) -> None:
        """Release the connection pool."""
        await self._client.aclose()

    def fail(self, message: str) -> AdapterError:
        """An AdapterError for this provider."""
        return AdapterError(self.provider, message)

    async def get_json(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        model: type[M],
        headers: Mapping[str, str] | None = None,
        cached: bool = True,
        lookup: bool = True,
    ) -> M:
        """GET path parsed into model; `cached` stores the answer, `lookup` tries the cache first."""
        key = cache_key(self.provider, "GET", path, params)
        if cached and lookup:
            hit = await self.cached(path, params, model)
            if hit is not None:
                return hit
        response = await self.send("GET", path, params=params, headers=headers)
        result = self._parse(response, model)
        if cached and self.cache is not None:
            await self.cache.put(key, response.text)
        return result

    async def cached(self, path: str, params: Mapping[str, Any] | None, model: type[M]) -> M | None:
        """The cached answer to GET path with params, if one is fresh and still parses."""
        if self.cache is None:
            return None
        body = await self.cache.get(cache_key(self.provider, "GET", path, params))
        if body is None:
            return None
        try:
            return model.model_validate_json(body)
        except ValidationError:
            return None

    async def post_json(
        self, path: str, body: Mapping[str, Any], *, model: type[M],
        headers: Mapping[str, str] | None = None, login: bool = False,
    ) -> M:
        """POST a JSON body (never cached) and parse the answer into model; `login`: the body is the
        credentials, so a 400 is theirs too (TVDB: "pin required")."""
        response = await self.send("POST", path, json=body, headers=headers, login=login)
        return self._parse(response, model)

    async def send(
        self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
        json: Any = None, headers: Mapping[str, str] | None = None, login: bool = False,
    ) -> httpx.Response:
        """Send with bounded retries on 429/5xx/connection errors; return a non-error response."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        query.update(self._secret_params)
        policy = self.policy
        for attempt in range(1, policy.attempts + 1):
            wait = policy.backoff * 2 ** (attempt - 1)
            try:
                response = await self._client.request(
                    method, path, params=query or None, json=json, headers=headers
                )
            except httpx.TimeoutException:
                raise self.fail(f"did not answer within {self._timeout:g} s") from None
            except httpx.HTTPError as exc:
                problem = f"could not be reached ({type(exc).__name__})"
            else:
                status = response.status_code
                if status == 429 or status >= 500:
                    asked = retry_after_seconds(response.headers.get("Retry-After"))
                    if asked is not None:
                        wait = asked
                    if wait > policy.max_wait:
                        raise self.fail(
                            f"answered HTTP {status} and asks to wait {wait:.0f} s, longer than the "
                            f"{policy.max_wait:g} s Jellybit waits; try again later"
                        )
                    problem = "is rate limiting requests (HTTP 429)" if status == 429 else (
                        f"answered HTTP {status}"
                    )
                else:
                    return self._check(response, login=login)
            if attempt == policy.attempts:
                raise self.fail(f"{problem}, on each of {policy.attempts} attempts")
            log.info(
                "%s %s; retrying in %.1f s", self.provider, problem, wait,
                extra={"provider": self.provider, "attempt": attempt, "wait_seconds": wait},
            )
            await asyncio.sleep(wait)
        raise self.fail("no attempt was made")  # attempts < 1

    def _check(self, response: httpx.Response, *, login: bool = False) -> httpx.Response:
        status = response.status_code
        if status in (401, 403) or (login and status == 400):
            said = provider_reason(response)
            raise MetadataAuthError(self.provider, f"rejected the credentials (HTTP {status}"
                                    + (f": {said})" if said else ")"))
        if status == 404:
            raise MetadataNotFound(self.provider, "has no such record (HTTP 404)")
        if status >= 400:
            raise self.fail(f"refused the request (HTTP {status})")
        return response

    def _parse(self, response: httpx.Response, model: type[M]) -> M:
        try:
            return model.model_validate_json(response.content)
        except ValidationError:
            raise self.fail("answered with data Jellybit cannot read (not the expected JSON)") from None
