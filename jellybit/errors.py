"""Domain errors: every failure a user can cause or see is one of these, with a stable code."""

from __future__ import annotations


class JellybitError(Exception):
    """Base of all domain errors; `code` is stable and travels in MQTT error responses."""

    code = "error"
    transient = False       # True: a retry later may succeed (an outage, a busy worker)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidSource(JellybitError):
    """The torrent source is malformed: bad magnet, not a torrent, too large, unsupported scheme."""

    code = "invalid_source"


class InvalidArgument(JellybitError):
    """A command argument is missing or has the wrong shape."""

    code = "invalid_argument"


class NotFound(JellybitError):
    """An id that names nothing (or is not an id at all)."""

    code = "not_found"


class InvalidState(JellybitError):
    """The command does not apply in the download's current state."""

    code = "invalid_state"


class Conflict(JellybitError):
    """Another active download owns one of the infohashes."""

    code = "conflict"


class ConfirmationRequired(JellybitError):
    """A destructive command was sent without its explicit confirmation."""

    code = "confirmation_required"


class Busy(JellybitError):
    """The worker has too much of this work in hand right now; the same request later will run."""

    code = "busy"
    transient = True


class ConfigError(JellybitError):
    """The configuration file is missing, unreadable or invalid."""

    code = "config_error"


class AdapterError(JellybitError):
    """An outside system (qBittorrent, LLM, metadata, Jellyfin) failed or could not be reached."""

    code = "adapter_error"
    transient = True        # worth trying again later (an outage), unlike a rejected key or a missing record

    def __init__(self, system: str, message: str, *, errno: int | None = None,
                 path: str | None = None) -> None:
        super().__init__(f"{system}: {message}")
        self.system = system
        self.errno = errno      # the OSError's errno behind a filesystem failure, and the path it hit
        self.path = path


class TorrentRejected(AdapterError):
    """qBittorrent refused an add: `reason` is "duplicate" (already there) or "invalid" (not a torrent)."""

    def __init__(self, system: str, message: str, *, reason: str) -> None:
        super().__init__(system, message)
        self.reason = reason


class UnsafePath(JellybitError):
    """A computed target path would leave its library root."""

    code = "unsafe_path"


class StorageFault(JellybitError):
    """The database's disk or a library root is full, read-only, gone or locked (core/storage.py).

    `code` is the fault's own (`storage_full`, `library_read_only`, …) and the message says where and
    what to do. Transient: the same request runs once the fault is over.
    """

    transient = True

    def __init__(self, code: str, component: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.component = component
