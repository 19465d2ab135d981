"""Every face offers an action in exactly the states the engine accepts it (docs/architecture.md,
"The presentation part").

The engine's side is measured, not read from its table: each command is sent to a fresh download in
each state over a real store and the real state machine; `InvalidState` means refused, anything else
(done, or a refusal about its arguments) means the state allows it. Each face's side is what it really
builds for a download in that state, as the MQTT `get` answer carries it: the panel's buttons, the lines
under `Next:` of `jellybit show`, the buttons of a Telegram card, the Home Assistant blueprint's buttons.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

import pytest

from jellybit.cli.show import next_commands
from jellybit.core.records import Candidate, MediaType, Plan, PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.states import COMMAND_STATES, TRANSITIONS, Actor, State, is_reactivation
from jellybit.engine.events import Event, EventKind
from jellybit.errors import InvalidState, JellybitError
from jellybit.protocol import DownloadDetail
from jellybit.transports.payloads import event_payload
from jellybit.transports.telegram import models
from jellybit.transports.telegram.render import COMMANDS, card
from jellybit.transports.telegram.text import decode_press
from tests.support.engine import Engine, EngineFactory
from tests.support.qbittorrent import magnet
from ui.actions import offered

BLUEPRINT = Path(__file__).resolve().parents[1] / "docs/blueprints/automation/jellybit/review_notify.yaml"
# Arguments each command takes beside the id: valid enough that only the state can refuse it.
ARGUMENTS: dict[str, dict[str, object]] = {
    "apply": {}, "upgrade": {"choice": "keep_both"}, "refine": {"hint": "the 1999 film"}, "reject": {},
    "defer": {"hours": 1}, "undo": {}, "retry": {}, "cancel": {}, "relink": {},
}
Offers = dict[State, frozenset[str]]


def path_to(target: State) -> list[State]:
    """The shortest walk from `queued` to a state through the one transition table."""
    seen = {State.QUEUED: [State.QUEUED]}
    todo = deque([State.QUEUED])
    while todo:
        here = todo.popleft()
        for source, goal in TRANSITIONS:
            if source is here and goal not in seen:
                seen[goal] = [*seen[here], goal]
                todo.append(goal)
    return seen[target][1:]


def draft(name: str) -> RecognitionDraft:
    """A film recognition with two candidates and a blocking reason, as the recognizer leaves one."""
    return RecognitionDraft(
        MediaType.MOVIE, "The Matrix", 1999, Plan((PlanItem(f"{name}/film.mkv", 100, Role.VIDEO),)),
        confidence=0.55,
        reasons=(Reason("small_margin", "the runner-up is nearly as good", 0.15, blocking=True),),
        candidates=(Candidate("tmdb", "603", MediaType.MOVIE, "The Matrix", 1999, distance=0.05),
                    Candidate("tmdb", "604", MediaType.MOVIE, "The Matrix Reloaded", 2003, distance=0.12)))


async def download_in(engine: Engine, state: State, name: str) -> str:
    """A download walked to `state` by the real state machine, its recognition stored on the way."""
    download_id = (await engine.commands.add(source=magnet(name=name))).download.id
    for step in path_to(state):
        current = (await engine.store.get_download(download_id)).state
        await engine.worker.serial.change(download_id, step, reason="test", actor=Actor.WORKER,
                                          reactivate=is_reactivation(current, step))
        if step is State.RECOGNIZING:
            await engine.store.save_recognition(download_id, draft(name))
    return download_id


@pytest.fixture
async def measured(make_engine: EngineFactory) -> tuple[Offers, dict[State, DownloadDetail]]:
    """What the engine accepts in each state, and a download in each state as `get` answers it."""
    engine = await make_engine(automatic=False)
    accepted: dict[State, set[str]] = {state: set() for state in State}
    shown: dict[State, DownloadDetail] = {}
    for state in State:
        shown[state] = await models.detail(engine.commands, await download_in(engine, state, f"Face.{state}"))
        for command, arguments in ARGUMENTS.items():
            target = await download_in(engine, state, f"Face.{state}.{command}")
            try:
                await getattr(engine.commands, command)(target, **arguments)
            except InvalidState:
                continue
            except JellybitError:
                pass            # refused for its arguments or the review's content: the state allowed it
            accepted[state].add(command)
    return {state: frozenset(found) for state, found in accepted.items()}, shown


def held(detail: DownloadDetail) -> DownloadDetail:
    """The same download whose review asks the better-copy question (its video is held)."""
    data = detail.model_dump(mode="json", by_alias=True)
    if data["recognition"] is not None:
        for row in data["recognition"]["plan"]:
            row["status"], row["note"] = "held", "already in your library as 720p"
    return DownloadDetail.model_validate(data)


def panel(detail: DownloadDetail) -> frozenset[str]:
    """The download page's buttons, better-copy card and hint box."""
    asks = any(row.status == "held" for row in (detail.recognition.plan if detail.recognition else []))
    return frozenset(offered(detail.download.state, asks_upgrade=asks))


def cli(detail: DownloadDetail) -> frozenset[str]:
    """The commands under `Next:` of `jellybit show`."""
    recognition = detail.recognition
    asks = any(row.status == "held" for row in (recognition.plan if recognition else []))
    lines = next_commands(detail.download.id, detail.download.state,
                          recognition.candidates if recognition else [], upgrade=asks)
    return frozenset(re.match(r"jellybit (\w+) ", line).group(1) for line in lines)  # type: ignore[union-attr]


def telegram(detail: DownloadDetail) -> frozenset[str]:
    """The commands behind the buttons of the download's Telegram card."""
    shown = card(detail, panel="https://panel.example", margin=0.15)
    presses = [decode_press(button.callback_data) for row in (shown.keyboard.inline_keyboard
                                                              if shown.keyboard else ()) for button in row
               if button.callback_data]
    return frozenset(COMMANDS[press.action] for press in presses if press is not None)


def home_assistant(detail: DownloadDetail) -> frozenset[str]:
    """The review notification blueprint's buttons: each one shown only when the event about the
    download's state names its command in `actions` (built by the payload code the worker publishes)."""
    text = BLUEPRINT.read_text(encoding="utf-8")
    block = text[text.index("command: >-"):text.index("request: >-")]
    commands = frozenset(re.findall(r"'([a-z_]+)'", block))
    assert commands, "the blueprint's command template names no command"
    for command in commands:
        assert f"'{command}' in can" in text, f"the blueprint offers {command} whatever the state allows"
    event = Event(EventKind.STATE_CHANGED, detail.download.id, to_state=detail.download.state)
    return commands & frozenset(event_payload(event).actions)


FACES = {"panel": panel, "cli": cli, "telegram": telegram, "home_assistant": home_assistant}


async def test_the_engine_accepts_each_command_in_exactly_the_states_of_its_table(
        measured: tuple[Offers, dict[State, DownloadDetail]]) -> None:
    """The table the faces read is the rule the engine keeps (measured over every state)."""
    accepted, _ = measured
    for state in State:
        table = frozenset(command for command, states in COMMAND_STATES.items() if state in states)
        assert accepted[state] == table, f"in {state}: the engine accepts {sorted(accepted[state])}, " \
                                         f"the table says {sorted(table)}"


@pytest.mark.parametrize("face", sorted(FACES))
async def test_every_face_offers_what_the_engine_accepts_in_every_state(
        measured: tuple[Offers, dict[State, DownloadDetail]], face: str) -> None:
    """A face offers an action in a state iff the engine accepts it there, for every action it has."""
    accepted, shown = measured
    offers = {state: FACES[face](shown[state]) | FACES[face](held(shown[state])) for state in State}
    vocabulary = frozenset().union(*offers.values())
    assert vocabulary, f"{face} offers nothing at all: the check would be vacuous"
    for state in State:
        assert offers[state] == accepted[state] & vocabulary, (
            f"{face} in {state} offers {sorted(offers[state])}; the engine accepts "
            f"{sorted(accepted[state] & vocabulary)} of the actions {face} has")
    if face in ("panel", "cli"):
        assert vocabulary == frozenset(COMMAND_STATES), f"{face} lacks {set(COMMAND_STATES) - vocabulary}"


def test_a_command_the_table_gains_is_offered_by_the_panel_and_the_cli_as_they_are(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk 'add a command' (docs/architecture.md): a row in `COMMAND_STATES` is all the panel's
    action bar and the CLI's `Next:` need to offer it, in exactly its states."""
    monkeypatch.setitem(COMMAND_STATES, "pause", frozenset({State.DOWNLOADING}))
    ident = "01jbz9x8k4m3n2p1q0r9s8t7v6"
    for state in State:
        assert ("pause" in offered(state)) is (state is State.DOWNLOADING)
        assert (f"jellybit pause {ident}" in next_commands(ident, state)) is (state is State.DOWNLOADING)
