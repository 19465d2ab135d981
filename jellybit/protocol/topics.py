"""The MQTT topics: every topic builder, the commands, the event types. Nothing else builds topics."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

PROTOCOL_VERSION = 1
AVAILABILITY_ONLINE = "online"
AVAILABILITY_OFFLINE = "offline"


class Command(StrEnum):
    """Every command a client may send on `<base>/request/<command>`."""

    ADD = "add"
    APPLY = "apply"
    UPGRADE = "upgrade"
    REFINE = "refine"
    REJECT = "reject"
    DEFER = "defer"
    UNDO = "undo"
    RETRY = "retry"
    CANCEL = "cancel"
    RELINK = "relink"
    DELETE_TITLE = "delete_title"
    GET = "get"
    LIST = "list"
    TITLES = "titles"
    NOTIFY = "notify"


# Commands that change nothing: never stored for transaction de-duplication.
READ_ONLY_COMMANDS = frozenset({Command.GET, Command.LIST, Command.TITLES, Command.NOTIFY})


class EventType(StrEnum):
    """`event_type` values on `<base>/events` (and the Home Assistant event entity)."""

    ADDED = "added"
    STATE_CHANGED = "state_changed"
    REVIEW_REQUESTED = "review_requested"
    DONE = "done"
    FAILED = "failed"
    ERROR = "error"            # a command failed; `command`, `code` and `message` say which and why
    FAULT = "fault"            # a worker component failed or recovered; `id` names the component
    JELLYFIN = "jellyfin"      # Jellyfin lists a done download (`reason`: found, `url`: its page) or not


@dataclass(frozen=True)
class Topics:
    """Topic builders for one base topic and one Home Assistant discovery prefix."""

    base: str = "jellybit"
    discovery_prefix: str = "homeassistant"

    @property
    def availability(self) -> str:
        """Retained `online`/`offline`; `offline` is also the Last Will."""
        return f"{self.base}/availability"

    @property
    def info(self) -> str:
        """Retained worker info and the status of every outside system."""
        return f"{self.base}/info"

    @property
    def summary(self) -> str:
        """Retained counts per state."""
        return f"{self.base}/summary"

    @property
    def events(self) -> str:
        """Event stream (not retained, QoS 1)."""
        return f"{self.base}/events"

    def download(self, download_id: str) -> str:
        """Retained state of one download."""
        return f"{self.base}/downloads/{download_id}"

    @property
    def downloads_wildcard(self) -> str:
        """Subscribe to every download topic."""
        return f"{self.base}/downloads/+"

    def review(self, download_id: str) -> str:
        """Retained review request of one download in review."""
        return f"{self.base}/reviews/{download_id}"

    @property
    def reviews_wildcard(self) -> str:
        """Subscribe to every review topic."""
        return f"{self.base}/reviews/+"

    def request(self, command: Command | str) -> str:
        """Where a client sends a command."""
        return f"{self.base}/request/{command}"

    @property
    def requests_wildcard(self) -> str:
        """What the worker subscribes to: every topic under `request/` (a wrong one is answered too)."""
        return f"{self.base}/request/#"

    def response(self, command: Command | str) -> str:
        """Where the worker answers (unless an MQTT 5 response topic was given)."""
        return f"{self.base}/response/{command}"

    @property
    def ha_status(self) -> str:
        """Home Assistant's birth/last-will topic."""
        return f"{self.discovery_prefix}/status"

    def ha_device_config(self, node_id: str) -> str:
        """Device-based discovery config topic."""
        return f"{self.discovery_prefix}/device/{node_id}/config"

    def ha_text_state(self) -> str:
        """State topic of the Home Assistant "add torrent" text entity (always empty)."""
        return f"{self.base}/ha/add_text"

    def parse_download_topic(self, topic: str) -> str | None:
        """Return the id of a `downloads/<id>` or `reviews/<id>` topic, else None."""
        for prefix in (f"{self.base}/downloads/", f"{self.base}/reviews/"):
            if topic.startswith(prefix):
                rest = topic[len(prefix):]
                return rest if rest and "/" not in rest else None
        return None

    def parse_request_topic(self, topic: str) -> str | None:
        """Return what follows `<base>/request/` (the command name, validated later), else None.

        The bare `<base>/request/` gives "" and a deeper topic such as `request/add/x` gives
        "add/x": neither names a command, and both are answered `unknown_command`.
        """
        prefix = f"{self.base}/request/"
        return topic[len(prefix):] if topic.startswith(prefix) else None


ANONYMOUS_OWNER = "_client"


def private_response_topic(prefix: str, username: str | None, client_id: str) -> str:
    """A client's own response topic, `<prefix><broker user name>/<client id>`.

    The shipped ACL lets only the account of that name read it (mosquitto's `%u` pattern); a client
    without a user name (an anonymous broker) uses `_client`. A name with `/`, `+` or `#` cannot be
    one topic level (mosquitto never matches such a name in `%u` either).
    """
    owner = username if username and not any(c in username for c in "/+#\0") else ANONYMOUS_OWNER
    return f"{prefix}{owner}/{client_id}"


def response_prefix(base: str, configured: str | None = None) -> str:
    """The topic prefix every response is published under: `<base>/response/` unless configured."""
    prefix = configured or f"{base}/response/"
    return prefix if prefix.endswith("/") else prefix + "/"
