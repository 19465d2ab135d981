"""docs/mqtt-api.md documents exactly jellybit/protocol.py: every command, topic and event type."""

from __future__ import annotations

from pathlib import Path

from jellybit.protocol import REQUEST_MODELS, Command, EventType, Topics

DOC = (Path(__file__).resolve().parents[1] / "docs" / "mqtt-api.md").read_text(encoding="utf-8")


def test_every_command_is_documented_with_a_one_liner() -> None:
    for command in Command:
        assert f"| `{command.value}` |" in DOC, command
        assert f"jellybit/request/{command.value} " in DOC, command
    assert set(REQUEST_MODELS) == set(Command)


def test_every_request_field_is_documented() -> None:
    for command, model in REQUEST_MODELS.items():
        row = next(line for line in DOC.splitlines() if line.startswith(f"| `{command.value}` |"))
        for field in model.model_fields:
            if field != "transaction":
                assert f"`{field}`" in row, (command, field)


def test_every_topic_and_event_type_is_documented() -> None:
    topics = Topics("<base>", "<discovery_prefix>")
    for topic in (topics.availability, topics.info, topics.summary, topics.events,
                  topics.download("<id>"), topics.review("<id>"), topics.request("<command>"),
                  topics.response("<command>"), topics.ha_text_state(), topics.ha_status,
                  topics.ha_device_config("jellybit")):
        assert f"`{topic}`" in DOC, topic
    for event_type in EventType:
        assert f"`{event_type.value}`" in DOC, event_type
