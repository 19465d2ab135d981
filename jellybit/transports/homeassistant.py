"""Home Assistant MQTT discovery: one Jellybit device, its entities, re-sent when HA comes online.

Entities are described by a tuple of frozen descriptions (the Home Assistant integration style),
not a class per sensor. Device-based discovery: one retained config on
`<prefix>/device/<node_id>/config` carrying `dev`, `o` and `cmps`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from jellybit import __version__
from jellybit.protocol import AVAILABILITY_OFFLINE, AVAILABILITY_ONLINE, Command, EventType, Topics
from jellybit.transports.mqtt.bridge import Message

log = logging.getLogger(__name__)

Publish = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class EntityDescription:
    """One Home Assistant entity of the Jellybit device."""

    key: str
    platform: str
    name: str
    icon: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    topic: Callable[[Topics], dict[str, str]] = lambda topics: {}


def _count(key: str, name: str, icon: str, attributes: str | None = None) -> EntityDescription:
    """A sensor counting downloads, read from the summary; `attributes` templates its attributes."""
    options = {"val_tpl": f"{{{{ value_json.{key} }}}}", "stat_cla": "measurement",
               "unit_of_meas": "downloads"}
    if attributes is None:
        return EntityDescription(key, "sensor", name, icon, options, lambda t: {"stat_t": t.summary})
    return EntityDescription(key, "sensor", name, icon, {**options, "json_attr_tpl": attributes},
                             lambda t: {"stat_t": t.summary, "json_attr_t": t.summary})


ENTITIES: tuple[EntityDescription, ...] = (
    _count("active", "Active", "mdi:download-multiple"),
    _count("downloading", "Downloading", "mdi:download"),
    _count("in_review", "In review", "mdi:account-question"),
    _count("failed", "Failed", "mdi:alert-circle"),
    # The count is the state; the waiting downloads (id, title, reason, panel link) are attributes.
    _count("review_queue", "Review queue", "mdi:account-clock",
           "{{ {'downloads': value_json.reviews} | tojson }}"),
    EntityDescription(
        "last_completed", "sensor", "Last completed", "mdi:movie-check",
        {"val_tpl": "{{ (value_json.last_completed.title if value_json.last_completed else '')[:255] }}"},
        lambda t: {"stat_t": t.summary},
    ),
    EntityDescription(
        "qbittorrent", "binary_sensor", "qBittorrent", None,
        {"dev_cla": "connectivity", "ent_cat": "diagnostic",
         # `None` is HA's payload for "unknown": not polled yet is not disconnected.
         "val_tpl": "{{ 'None' if value_json.qbittorrent.connected is none else "
                    "('ON' if value_json.qbittorrent.connected else 'OFF') }}"},
        lambda t: {"stat_t": t.info},
    ),
    EntityDescription(
        # On while the database's disk or a library root has a storage fault (docs/mqtt-api.md); the
        # faults in words are its attribute.
        "storage", "binary_sensor", "Storage", None,
        {"dev_cla": "problem", "ent_cat": "diagnostic",
         "val_tpl": "{{ 'ON' if (value_json.components | default({})).values() "
                    "| selectattr('code', 'string') | list else 'OFF' }}",
         "json_attr_tpl": "{{ {'faults': (value_json.components | default({})).values() "
                          "| selectattr('code', 'string') | map(attribute='error') | list} | tojson }}"},
        lambda t: {"stat_t": t.info, "json_attr_t": t.info},
    ),
    EntityDescription(
        # Every outside service the worker uses whose key was refused or which it cannot reach, by
        # name ("ok" when none); each service's state and what to do are attributes.
        "service_problems", "sensor", "Service problems", "mdi:lan-disconnect",
        {"ent_cat": "diagnostic",
         "val_tpl": "{% set ns = namespace(bad=[]) %}"
                    "{% for name, s in [('qbittorrent', value_json.qbittorrent), ('llm', value_json.llm), "
                    "('jellyfin', value_json.jellyfin), ('telegram', value_json.telegram)] "
                    "+ (value_json.metadata | dictsort) %}"
                    "{% if s.state in ['refused', 'unreachable', 'misconfigured'] %}"
                    "{% set ns.bad = ns.bad + [name ~ ' ' ~ s.state] %}{% endif %}{% endfor %}"
                    "{{ (ns.bad | join(', ') or 'ok')[:255] }}",
         "json_attr_tpl": "{{ {'qbittorrent': value_json.qbittorrent, 'llm': value_json.llm, "
                          "'jellyfin': value_json.jellyfin, 'telegram': value_json.telegram, "
                          "'metadata': value_json.metadata} | tojson }}"},
        lambda t: {"stat_t": t.info, "json_attr_t": t.info},
    ),
    EntityDescription(
        "events", "event", "Events", "mdi:bell-ring",
        {"evt_typ": [e.value for e in EventType]},
        lambda t: {"stat_t": t.events},
    ),
    EntityDescription(
        # HA caps text at 255 characters: a bare infohash or a short magnet fits; a long magnet and a
        # context go through the `jellybit_add` script (docs/blueprints/). Its state is always empty.
        "add", "text", "Add torrent", "mdi:magnet",
        {"max": 255, "min": 0, "mode": "text", "val_tpl": "{{ value_json if value_json is string else '' }}"},
        lambda t: {"cmd_t": t.request(Command.ADD), "stat_t": t.ha_text_state()},
    ),
)


def discovery_payload(topics: Topics, node_id: str, *, panel_url: str | None,
                      entities: tuple[EntityDescription, ...] = ENTITIES) -> dict[str, Any]:
    """The device-based discovery config for the Jellybit device."""
    components: dict[str, Any] = {}
    for entity in entities:
        unique = f"{node_id}_{entity.key}"
        component: dict[str, Any] = {
            "p": entity.platform,
            "name": entity.name,
            "unique_id": unique,
            "default_entity_id": f"{entity.platform}.{unique}",
            **entity.topic(topics),
            **entity.options,
        }
        if entity.icon:
            component["ic"] = entity.icon
        components[entity.key] = component
    device: dict[str, Any] = {
        "ids": [node_id],
        "name": "Jellybit",
        "mf": "Jellybit",
        "mdl": "Torrent to Jellyfin worker",
        "sw": __version__,
    }
    if panel_url:
        device["cu"] = panel_url
    return {
        "dev": device,
        "o": {"name": "jellybit", "sw": __version__, "url": panel_url or "http://127.0.0.1:8099"},
        "avty": [{"t": topics.availability, "pl_avail": AVAILABILITY_ONLINE,
                  "pl_not_avail": AVAILABILITY_OFFLINE}],
        "qos": 1,
        "cmps": components,
    }


def removal_payload(previous: dict[str, Any], current: dict[str, Any]) -> dict[str, Any] | None:
    """A config that removes components present before and gone now (each sent with only `p`)."""
    old = previous.get("cmps") if isinstance(previous, dict) else None
    if not isinstance(old, dict):
        return None
    gone = {key: {"p": value.get("p")} for key, value in old.items()
            # A component already reduced to `p` is a removal we sent: do not loop on our own echo.
            if key not in current["cmps"] and isinstance(value, dict) and value.get("p") and len(value) > 1}
    if not gone:
        return None
    return {**current, "cmps": {**current["cmps"], **gone}}


class HomeAssistantDiscovery:
    """Bridge extension: publishes discovery, re-sends it (then state) when HA says `online`."""

    def __init__(self, topics: Topics, *, node_id: str = "jellybit", panel_url: str | None = None,
                 republish_state: Callable[[], Awaitable[None]] | None = None,
                 max_delay: float = 2.0) -> None:
        self.topics = topics
        self.node_id = node_id
        self.panel_url = panel_url
        self.republish_state = republish_state
        self.max_delay = max_delay
        self.config_topic = topics.ha_device_config(node_id)
        self.subscriptions = (topics.ha_status, self.config_topic)
        self._published = False

    def payload(self) -> dict[str, Any]:
        """The current discovery config."""
        return discovery_payload(self.topics, self.node_id, panel_url=self.panel_url)

    async def on_connect(self, publish: Publish) -> None:
        """Publish discovery (the retained config we see echoed back tells us what to remove)."""
        await publish(Message(self.config_topic, _encode(self.payload())))
        # An empty text box, not "unknown": the text entity's state topic holds an empty JSON string.
        await publish(Message(self.topics.ha_text_state(), b'""'))
        self._published = True

    async def on_message(self, topic: str, payload: bytes, publish: Publish) -> None:
        """HA came online: re-send discovery after a small random delay, then the state."""
        if topic == self.config_topic:
            await self._remove_stale(payload, publish)
            return
        if payload.decode("utf-8", "replace").strip() != "online":
            return
        await asyncio.sleep(random.uniform(0, self.max_delay))
        await publish(Message(self.config_topic, _encode(self.payload()), force=True))
        if self.republish_state is not None:
            await self.republish_state()
        log.info("Home Assistant came online; discovery re-sent")

    async def _remove_stale(self, payload: bytes, publish: Publish) -> None:
        try:
            previous = json.loads(payload) if payload else None
        except ValueError:
            return
        if not isinstance(previous, dict):
            return
        removal = removal_payload(previous, self.payload())
        if removal is not None:
            await publish(Message(self.config_topic, _encode(removal), force=True))
            await publish(Message(self.config_topic, _encode(self.payload()), force=True))
            log.info("removed Home Assistant entities that no longer exist")


def _encode(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
