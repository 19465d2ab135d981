"""The wire vocabularies as enums (one definition each, owned by the core) and the field limits.

Clients (the panel, the CLI) read these from `jellybit.protocol` and never re-declare them; the
provider table (names, pages, order) travels with `Provider`, so a face names a provider from it.
"""

from __future__ import annotations

from jellybit.core.limits import (
    MAX_CONTEXT_CHARS,
    MAX_DEFER_HOURS,
    MAX_EPISODE,
    MAX_EPISODES_PER_FILE,
    MAX_FILE_OVERRIDES,
    MAX_HINT_CHARS,
    MAX_ID_CHARS,
    MAX_LIST_LIMIT,
    MAX_LIST_OFFSET,
    MAX_LIST_TEXT_CHARS,
    MAX_PATH_CHARS,
    MAX_PROVIDER_ID_CHARS,
    MAX_REASON_CHARS,
    MAX_SEASON,
    MAX_SOURCE_CHARS,
    MAX_TITLE_CHARS,
    MAX_TRANSACTION_CHARS,
    MAX_YEAR,
    MIN_YEAR,
)
from jellybit.core.links import LIVE_STATUSES, LinkStatus
from jellybit.core.providers import (
    PROVIDERS,
    Provider,
    ProviderFacts,
    page_url,
    provider_name,
    provider_order,
)
from jellybit.core.quality import UpgradeChoice
from jellybit.core.records import MediaType, Recommendation, Role
from jellybit.core.states import ACTIVE_STATES, COMMAND_STATES, SETTLED_STATES, Actor, State

__all__ = [
    "ACTIVE_STATES", "COMMAND_STATES", "LIVE_STATUSES", "MAX_CONTEXT_CHARS", "MAX_DEFER_HOURS", "MAX_EPISODE",
    "MAX_EPISODES_PER_FILE",
    "MAX_FILE_OVERRIDES", "MAX_HINT_CHARS", "MAX_ID_CHARS", "MAX_LIST_LIMIT", "MAX_LIST_OFFSET",
    "MAX_LIST_TEXT_CHARS", "MAX_PATH_CHARS", "MAX_PROVIDER_ID_CHARS", "MAX_REASON_CHARS", "MAX_SEASON",
    "MAX_SOURCE_CHARS", "MAX_TITLE_CHARS", "MAX_TRANSACTION_CHARS", "MAX_YEAR", "MIN_YEAR",
    "PROVIDERS", "SETTLED_STATES", "Actor", "LinkStatus", "MediaType", "Provider", "ProviderFacts",
    "Recommendation", "Role", "State", "UpgradeChoice", "page_url", "provider_name", "provider_order",
]
