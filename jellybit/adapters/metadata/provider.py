"""What every metadata provider shares: its config, result cap and HTTP client, closing and pinging."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Generic, Protocol, TypeVar

from jellybit.adapters.metadata.base import ApiClient, MetadataAuthError, RetryPolicy
from jellybit.adapters.metadata.cache import ResponseCache
from jellybit.adapters.status import ServiceStatus
from jellybit.core.providers import Provider
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

    async def _status(self, probe: Awaitable[object], reached: str) -> ServiceStatus:
        """Await a probe and say how it went (a refused key apart); never raises."""
        try:
            await probe
        except AdapterError as exc:
            return ServiceStatus(self.name, False, exc.message, refused=isinstance(exc, MetadataAuthError))
        return ServiceStatus(self.name, True, reached)
