"""The state diagram of docs/state-machine.md, generated from the one transition table."""

from __future__ import annotations

from jellybit.core.states import ACTIVE_STATES, TRANSITIONS, State

_ORDER = {state: index for index, state in enumerate(State)}


def _label(text: str) -> str:
    # Mermaid ends a label at the line end only, but a colon inside it reads badly: use a dash.
    return text.replace(": ", " – ").replace(":", " ")


def mermaid_state_diagram() -> str:
    """A Mermaid `stateDiagram-v2` of every state and transition, in a stable order."""
    lines = ["stateDiagram-v2", "    [*] --> queued: ingest"]
    for (source, target), label in sorted(TRANSITIONS.items(),
                                          key=lambda item: (_ORDER[item[0][0]], _ORDER[item[0][1]])):
        lines.append(f"    {source.value} --> {target.value}: {_label(label)}")
    lines.append("    classDef active fill:#dbeafe,stroke:#1d4ed8")
    lines.append("    classDef settled fill:#f3f4f6,stroke:#6b7280")
    active = [s.value for s in State if s in ACTIVE_STATES]
    settled = [s.value for s in State if s not in ACTIVE_STATES]
    lines.append(f"    class {','.join(active)} active")
    lines.append(f"    class {','.join(settled)} settled")
    return "\n".join(lines) + "\n"
