"""The shipped blueprints in a real Home Assistant (2025.4.4): decide a review from a notification, add
a long magnet with a context.

docs/blueprints/ is copied into HA's config and instantiated exactly as docs/home-assistant.md says.
The notify action is a script that hands the notification to the test over MQTT (the companion app's
`notify.mobile_app_…` takes the same `title`, `message` and `data`) and also shows it as a persistent
notification; a button press is the `mobile_app_notification_action` event the app fires. The worker
is the real engine over a real qBittorrent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
import yaml

from jellybit.client import JellybitClient
from jellybit.core.states import State
from jellybit.protocol import Command
from tests.support.engine import EngineFactory
from tests.support.ha_device import PANEL_URL, Jellybit, eventually, now
from tests.support.ha_screens import home_assistant_screens, shots_folder
from tests.support.homeassistant import INSTALL_TIMEOUT, HomeAssistant
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent

pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT + 180)

BLUEPRINTS = Path(__file__).resolve().parents[2] / "docs" / "blueprints"
LONG_HASH = "d1b2c3d4e5f60718293a4b5c6d7e8f9012345678"


def install(ha: HomeAssistant, app: Jellybit) -> dict[str, str]:
    """Copy the blueprints into HA and write one automation and three scripts that use them."""
    shutil.copytree(BLUEPRINTS, ha.config_dir / "blueprints", dirs_exist_ok=True)
    tag = app.tag.replace("-", "_")
    ids = {"automation": f"jellybit_review_{tag}", "notify": f"jellybit_notify_{tag}",
           "add": f"jellybit_add_{tag}"}
    automations = [{
        "id": ids["automation"], "alias": ids["automation"],
        "use_blueprint": {"path": "jellybit/review_notify.yaml", "input": {
            "events_entity": app.events_entity, "notify_action": f"script.{ids['notify']}",
            "base_topic": app.config.base_topic, "result_timeout": 30}},
    }]
    scripts = {
        ids["notify"]: {
            "alias": "Test notification", "mode": "queued",
            "fields": {"title": {}, "message": {}, "data": {}},
            "sequence": [
                {"action": "mqtt.publish", "data": {
                    "topic": f"{app.config.base_topic}/test/notify",
                    "payload": "{{ {'title': title, 'message': message, 'data': data | default({})}"
                               " | to_json }}"}},
                {"action": "persistent_notification.create",
                 "data": {"title": "{{ title }}", "message": "{{ message }}"}},
            ],
        },
        ids["add"]: {"alias": "Add to Jellybit", "use_blueprint": {
            "path": "jellybit/add_torrent.yaml", "input": {"base_topic": app.config.base_topic}}},
    }
    (ha.config_dir / "automations.yaml").write_text(json.dumps(automations, ensure_ascii=False))
    (ha.config_dir / "scripts.yaml").write_text(json.dumps(scripts, ensure_ascii=False))
    return ids


class Notifications:
    """What the test's notify script hands over on `<base>/test/notify`, in order."""

    def __init__(self, broker: Broker, topic: str) -> None:
        self.broker = broker
        self.topic = topic
        self.seen: list[dict[str, Any]] = []
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def __aenter__(self) -> Notifications:
        self._task = asyncio.create_task(self._listen())
        await asyncio.wait_for(self._ready.wait(), 10)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _listen(self) -> None:
        async with aiomqtt.Client(self.broker.host, self.broker.port) as mqtt:
            await mqtt.subscribe(self.topic, qos=1)
            self._ready.set()
            async for message in mqtt.messages:
                self.seen.append(json.loads(bytes(message.payload)))

    async def next(self, title: str) -> dict[str, Any]:
        """The first notification (not yet taken) whose title starts with `title`."""
        def found() -> dict[str, Any] | None:
            return next((n for n in self.seen if n["title"].startswith(title)), None)
        notification = await eventually(lambda: now(found()), what=f"a notification '{title}'", within=30)
        self.seen.remove(notification)
        return notification


@pytest.fixture
async def reviewing(make_engine: EngineFactory, mosquitto: Broker, home_assistant: HomeAssistant,
                    qbittorrent: QbittorrentInstance) -> AsyncIterator[tuple[Jellybit, dict[str, str]]]:
    """A worker whose recognitions always ask a human, its device in HA, and the blueprints in use."""
    # the add script's magnet names trackers on loopback: a tracker of the user's own, allowed
    allowed = qbittorrent.config().model_copy(update={"allow_private_hosts": ["127.0.0.1"]})
    engine = await make_engine(allowed, automatic=False)
    app = Jellybit.make(engine, mosquitto, home_assistant)
    await app.start()
    try:
        entities = await app.all_entities()
        app.events_entity = entities["events"]["entity_id"]
        ids = install(home_assistant, app)
        async with home_assistant.client() as rest:
            for domain in ("script", "automation"):
                reply = await rest.post(f"/api/services/{domain}/reload", json={})
                assert reply.status_code == 200, reply.text

        async def loaded() -> bool:
            async with home_assistant.client() as rest:
                reply = await rest.get(f"/api/states/automation.{ids['automation']}")
                return reply.status_code == 200 and reply.json()["state"] == "on"

        await eventually(loaded, what="the blueprint automation, on")
        yield app, ids
    finally:
        await app.remove(mosquitto)


async def in_review(app: Jellybit, client: JellybitClient, folder: Path, name: str,
                    files: dict[str, int]) -> str:
    """Send a seeded .torrent over the bus (a client's `add`); its id once it waits in review."""
    seeded = seeded_torrent(folder, name, files)
    added = await client.request(Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()})
    await app.engine.settle(added.data.id, State.REVIEW)
    return added.data.id


async def press(ha: HomeAssistant, action: str) -> None:
    """What the companion app does when a notification button is pressed."""
    async with ha.client() as rest:
        reply = await rest.post("/api/events/mobile_app_notification_action", json={"action": action})
        assert reply.status_code == 200, reply.text


async def test_a_review_is_notified_with_buttons_and_apply_reports_back(
        reviewing: tuple[Jellybit, dict[str, str]], mosquitto: Broker,
        qbittorrent: QbittorrentInstance) -> None:
    app, _ids = reviewing
    ha = app.ha
    async with Notifications(mosquitto, f"{app.config.base_topic}/test/notify") as inbox, \
            JellybitClient(app.config, name="ha-review") as client:
        download = await in_review(app, client, qbittorrent.data_dir, "Some.Movie.2001.1080p",
                                   {"Some.Movie.2001.mkv": 50_000})

        asked = await inbox.next("Jellybit: Test Movie")
        assert "No confirmed metadata match" in asked["message"]
        assert "No confirmed metadata match. Apply lays it out as Test Movie (1999)." in asked["message"]
        assert "Some.Movie.2001.1080p" in asked["message"]
        link = f"{PANEL_URL}/download/{download}"
        best = (await app.engine.store.current_recognition(download)).candidates[0]
        assert asked["data"]["actions"] == [
            {"action": f"JELLYBIT_APPLY_{download}_{best.id}", "title": "Apply"},
            {"action": f"JELLYBIT_REJECT_{download}", "title": "Reject", "destructive": True},
            {"action": "URI", "title": "Open panel", "uri": link}]
        assert (asked["data"]["url"], asked["data"]["clickAction"]) == (link, link)
        assert asked["data"]["tag"] == f"jellybit-{download}"

        # The review queue sensor lists it, with the reason in words and the panel link.
        async def queued() -> dict[str, Any] | None:
            sensor = (await app.entities())["review_queue"]
            return sensor if sensor["state"] == "1" else None

        sensor = await eventually(queued, what="the review queue = 1")
        (item,) = sensor["attributes"]["downloads"]
        assert (item["id"], item["title"], item["reason"], item["url"]) == (
            download, "Test Movie", "No confirmed metadata match", link)

        folder = shots_folder()
        if folder is not None:      # scripts/screenshots: the device page and the notification, for the docs
            async with ha.client() as rest:
                device = (await rest.post("/api/template", json={
                    "template": f"{{{{ device_id('{app.events_entity}') }}}}"})).text.strip()
            await home_assistant_screens(ha, device, folder)

        await press(ha, f"JELLYBIT_APPLY_{download}_{best.id}")
        await app.engine.settle(download, State.DONE)
        done = await inbox.next("Jellybit: laid out")
        assert done["message"].strip() == "Test Movie (1999) is in the library."

        # Pressed once more (a second phone, a late tap): the worker refuses, and the sentence comes back.
        await press(ha, f"JELLYBIT_APPLY_{download}_{best.id}")
        refused = await inbox.next("Jellybit: not done")
        assert refused["message"].strip().startswith("Apply failed: ")


async def test_a_review_asked_while_it_downloads_says_how_far(
        reviewing: tuple[Jellybit, dict[str, str]], mosquitto: Broker,
        qbittorrent: QbittorrentInstance) -> None:
    app, _ids = reviewing
    async with Notifications(mosquitto, f"{app.config.base_topic}/test/notify") as inbox, \
            JellybitClient(app.config, name="ha-early") as client:
        seeded = seeded_torrent(qbittorrent.data_dir, "Early.Movie.2002.1080p",
                                {"Early.Movie.2002.mkv": 50_000})
        shutil.move(seeded.content, qbittorrent.data_dir / "away")     # the list is known, not the bytes
        added = await client.request(Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()})
        await app.engine.settle(added.data.id, State.REVIEW)
        asked = await inbox.next("Jellybit: Test Movie")
        assert "Still downloading, 0%: a decision is applied when the files arrive." in asked["message"]


async def test_reject_from_the_notification_and_a_poster_on_it(
        reviewing: tuple[Jellybit, dict[str, str]], mosquitto: Broker,
        qbittorrent: QbittorrentInstance) -> None:
    app, _ids = reviewing
    async with Notifications(mosquitto, f"{app.config.base_topic}/test/notify") as inbox, \
            JellybitClient(app.config, name="ha-reject") as client:
        download = await in_review(app, client, qbittorrent.data_dir, "Other.Film.1999",
                                   {"Other.Film.1999.mkv": 40_000})
        await inbox.next("Jellybit: Test Movie")
        await press(app.ha, f"JELLYBIT_REJECT_{download}")
        await app.engine.settle(download, State.CANCELLED)
        rejected = await inbox.next("Jellybit: rejected")
        assert "nothing is laid out" in rejected["message"]

        # A review event with a poster (as a worker with TMDB sends it): the notification carries the image.
        event = {"event_type": "review_requested", "id": "01jbposter0000000000000000", "name": "Fargo.S01",
                 "title": "Fargo", "year": 2014, "poster_url": "http://127.0.0.1:9/fargo.jpg",
                 "message": "Two shows named Fargo", "url": f"{PANEL_URL}/download/x",
                 "at": "2026-01-01T00:00:00Z"}
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as mqtt:
            await mqtt.publish(app.topics.events, json.dumps(event).encode(), qos=1)
        poster = await inbox.next("Jellybit: Fargo (2014)")
        assert poster["data"]["image"] == "http://127.0.0.1:9/fargo.jpg"
        assert poster["message"].startswith("Two shows named Fargo")


async def test_a_better_copy_is_decided_from_the_notification(
        reviewing: tuple[Jellybit, dict[str, str]], mosquitto: Broker,
        qbittorrent: QbittorrentInstance) -> None:
    app, _ids = reviewing
    held = ("already in your library as 1080p WEB-DL by NTb from Some.Movie.2001.1080p, laid out "
            "2026-11-05; this copy is 2160p Remux by FGT: better")
    app.engine.layouter.held = held           # the layout preview's better-copy question
    async with Notifications(mosquitto, f"{app.config.base_topic}/test/notify") as inbox, \
            JellybitClient(app.config, name="ha-upgrade") as client:
        download = await in_review(app, client, qbittorrent.data_dir, "Some.Movie.2001.2160p.REMUX",
                                   {"Some.Movie.2001.2160p.REMUX.mkv": 52_000})
        asked = await inbox.next("Jellybit: Test Movie")
        assert f"This film or episode is {held}." in asked["message"]
        assert asked["data"]["actions"] == [
            {"action": f"JELLYBIT_UPGRADE_{download}_KEEP", "title": "Keep both"},
            {"action": f"JELLYBIT_UPGRADE_{download}_REPLACE", "title": "Replace"},
            {"action": f"JELLYBIT_UPGRADE_{download}_SKIP", "title": "Skip"}]
        await press(app.ha, f"JELLYBIT_UPGRADE_{download}_REPLACE")
        await app.engine.settle(download, State.DONE)
        done = await inbox.next("Jellybit: laid out")
        assert "is in the library" in done["message"]
        assert (await app.engine.store.overrides(download))["upgrade"] == "replace"


async def test_the_add_script_takes_a_long_magnet_and_a_context(
        reviewing: tuple[Jellybit, dict[str, str]]) -> None:
    app, ids = reviewing
    trackers = "".join(f"&tr=http%3A%2F%2F127.0.0.1%3A{9000 + n}%2Fannounce" for n in range(8))
    source = f"magnet:?xt=urn:btih:{LONG_HASH}&dn=Fargo.S02.1080p.WEB-DL{trackers}"
    assert len(source) > 255    # more than HA's text entity takes
    async with app.ha.client() as rest:
        reply = await rest.post(f"/api/services/script/{ids['add']}",
                                json={"source": source, "torrent_context": "второй сезон, the 2014 series"})
        assert reply.status_code == 200, reply.text
    store = app.engine.store
    download = await eventually(lambda: store.find_active_by_hashes([LONG_HASH]), what="the download")
    assert download.context == "второй сезон, the 2014 series"


def documented_jellyfin_automation(app: Jellybit, notify: str) -> dict[str, Any]:
    """docs/home-assistant.md's "Notify when it is in Jellyfin" automation, as a user pastes it, with
    the device's event entity and the test's notify script in place of the phone."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "home-assistant.md").read_text(encoding="utf-8")
    section = docs.split("### Notify when it is in Jellyfin", 1)[1]
    automation = yaml.safe_load(section.split("```yaml", 1)[1].split("```", 1)[0])
    assert automation["triggers"][0]["entity_id"] == "event.jellybit_events"
    assert automation["actions"][0]["action"] == "notify.mobile_app_my_phone"
    automation["triggers"][0]["entity_id"] = app.events_entity
    automation["actions"][0]["action"] = f"script.{notify}"
    return {"id": f"jellybit_jellyfin_{app.tag.replace('-', '_')}", **automation}


async def test_the_documented_jellyfin_automation_says_in_jellyfin_with_the_link_or_what_to_check(
        make_engine: EngineFactory, mosquitto: Broker, home_assistant: HomeAssistant) -> None:
    """Done means in Jellyfin, told by Home Assistant: the `jellyfin` events the confirmation publishes
    reach the event entity, and the documented automation turns them into a notification."""
    from jellybit.core.jellyfin import Confirmation, missing_note
    from jellybit.core.states import Actor
    from jellybit.engine.events import Event, EventKind

    engine = await make_engine()
    app = Jellybit.make(engine, mosquitto, home_assistant)
    await app.start()
    try:
        app.events_entity = (await app.all_entities())["events"]["entity_id"]
        ids = install(home_assistant, app)          # the test's notify script (and the blueprints)
        automation = documented_jellyfin_automation(app, ids["notify"])
        (home_assistant.config_dir / "automations.yaml").write_text(json.dumps([automation]))
        async with home_assistant.client() as rest:
            for domain in ("script", "automation"):
                reply = await rest.post(f"/api/services/{domain}/reload", json={})
                assert reply.status_code == 200, reply.text

        async def loaded() -> bool:
            async with home_assistant.client() as rest:
                reply = await rest.get("/api/states")
                return any(s["entity_id"].startswith("automation.") and s["state"] == "on"
                           and s["attributes"].get("id") == automation["id"] for s in reply.json())

        await eventually(loaded, what="the documented automation, on")
        async with Notifications(mosquitto, f"{app.config.base_topic}/test/notify") as inbox:
            for name, status in (("Heat.1995.1080p", Confirmation.FOUND), ("Ronin.1998.1080p",
                                                                               Confirmation.MISSING)):
                added = await engine.commands.add(source=f"magnet:?xt=urn:btih:{uuid.uuid4().hex}{'0' * 8}"
                                                  f"&dn={name}")
                download_id = added.download.id
                for state in (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE):
                    await engine.worker.serial.change(download_id, state, reason="test", actor=Actor.WORKER)
                assert await engine.store.jellyfin_track(download_id) is not None
                url = f"http://jellyfin.lan:8096/web/#/details?id={download_id}" \
                    if status is Confirmation.FOUND else None
                note = None if url else missing_note(300, f"/srv/media/movies/{name}")
                # What the confirmation records and publishes (engine/jellyfin_confirm.py `_record`).
                download, changed = await engine.store.jellyfin_record(
                    download_id, status, item_id=download_id if url else None, url=url, note=note)
                assert changed
                engine.bus.publish(Event(EventKind.JELLYFIN, download_id, name=download.display_name,
                                         reason=status.value, data={"url": url, "note": note}))
                if status is Confirmation.FOUND:
                    found = await inbox.next("In Jellyfin: Heat.1995.1080p")
                    assert found["message"].strip() == "Ready to watch."
                    assert (found["data"]["url"], found["data"]["clickAction"]) == (url, url)
                else:
                    missing = await inbox.next("Not in Jellyfin yet: Ronin.1998.1080p")
                    assert missing["message"].strip() == note
                    assert "jellyfin.path_map" in missing["message"]
    finally:
        await app.remove(mosquitto)
