"""What every metadata provider shares: its config, result cap and HTTP client, closing and pinging."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Generic, Protocol, TypeVar

from jellybit.adapters.metadata.base import (
    ApiClient,
    MetadataAuthError,
    RetryPolicy,
    clean_query,
    media_type_of,
    unique_texts,
)
from jellybit.adapters.metadata.cache import ResponseCache
from jellybit.adapters.status import ServiceStatus
from jellybit.core.ports import MetadataQuery
from jellybit.core.providers import Provider
from jellybit.core.records import Candidate, MediaType
from jellybit.errors import AdapterError


class HttpSection(Protocol):
    """The config fields every provider's HTTP client is built from."""

    @property
    def base_url(self) -> str: ...
    @property
    def proxy(self) -> str | None: ...
    @property
    def timeout(self) -> float: ...


C = TypeVar("C", bound=HttpSection)


class ProviderClient(Generic[C]):
    """Base of the metadata providers: the config, the result cap and one `ApiClient`."""

    name: Provider

    def __init__(
        self, config: C, cache: ResponseCache | None = None, *,
        policy: RetryPolicy | None = None, max_results: int = 10,
    ) -> None:
        self.config = config
        self.max_results = max_results
        self._api = ApiClient(self.name, config.base_url, timeout=config.timeout, proxy=config.proxy,
                              cache=cache, policy=policy, **self._credentials(config))

    def _credentials(self, config: C) -> dict[str, Any]:
        """The `ApiClient` headers or query parameters that carry the key (none by default)."""
        return {}

    async def close(self) -> None:
        """Release the HTTP client."""
        await self._api.close()

    @staticmethod
    def _texts(query: MetadataQuery) -> list[str]:
        """What to search for: the title, then the original title if different, as search strings."""
        return unique_texts([clean_query(query.title), clean_query(query.original_title)])

    async def _status(self, probe: Awaitable[object], reached: str) -> ServiceStatus:
        """Await a probe and say how it went (a refused key apart); never raises."""
        try:
            await probe
        except AdapterError as exc:
            return ServiceStatus(self.name, False, exc.message, refused=isinstance(exc, MetadataAuthError))
        return ServiceStatus(self.name, True, reached)


class SeriesProvider(ProviderClient[C]):
    """A provider of series only: its search asks each text in turn and keeps each series once."""

    async def search(self, query: MetadataQuery) -> list[Candidate]:
        """Search series by title, then by original title if different; movies yield nothing."""
        if query.media_type is not None and media_type_of(query.media_type) is MediaType.MOVIE:
            return []
        found: dict[str, Candidate] = {}
        for text in self._texts(query):
            for candidate in await self._search(text, query.year):
                found.setdefault(candidate.provider_id, candidate)
        return list(found.values())

    async def _search(self, text: str, year: int | None) -> list[Candidate]:
        """The series one search text finds, best first."""
        raise NotImplementedError
