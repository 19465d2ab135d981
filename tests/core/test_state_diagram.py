"""docs/state-machine.md shows exactly the transition table."""

from __future__ import annotations

import re
from pathlib import Path

from jellybit.core.diagram import mermaid_state_diagram
from jellybit.core.states import TRANSITIONS, State

DOC = Path(__file__).resolve().parents[2] / "docs" / "state-machine.md"


def test_the_documented_diagram_is_the_generated_one() -> None:
    blocks = re.findall(r"```mermaid\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert blocks == [mermaid_state_diagram()]


def test_the_diagram_has_every_transition_and_state() -> None:
    diagram = mermaid_state_diagram()
    arrows = set(re.findall(r"^    (\w+) --> (\w+):", diagram, flags=re.M))
    assert arrows == {(a.value, b.value) for a, b in TRANSITIONS}
    assert {s for pair in arrows for s in pair} == {s.value for s in State}


def test_every_state_is_described_in_the_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    for state in State:
        assert f"| `{state.value}` |" in text
