"""The SQLite store: one class composed of one mixin per table group, all SQL lives here."""

from __future__ import annotations

from jellybit.adapters.store.base import StoreBase, StoreBusy, load_migrations
from jellybit.adapters.store.cache import MetadataCacheMixin
from jellybit.adapters.store.commands import CommandResultsMixin
from jellybit.adapters.store.downloads import DownloadsMixin
from jellybit.adapters.store.jellyfin import JellyfinMixin
from jellybit.adapters.store.links import LinksMixin
from jellybit.adapters.store.recognitions import RecognitionsMixin
from jellybit.adapters.store.telegram import TelegramMixin
from jellybit.adapters.store.views import ViewsMixin
from jellybit.core.store_records import CreateResult


class Store(
    LinksMixin, RecognitionsMixin, CommandResultsMixin, DownloadsMixin, MetadataCacheMixin, TelegramMixin,
    ViewsMixin, JellyfinMixin, StoreBase,
):
    """The application's store; open it with `await store.open()` (migrates by default)."""


__all__ = ["CreateResult", "Store", "StoreBusy", "load_migrations"]
