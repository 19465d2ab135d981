"""docs/database.md can never drift: its ER diagram must match the migrated schema exactly."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jellybit.adapters.store import Store

DOC = Path(__file__).resolve().parents[1] / "docs" / "database.md"
BLOCK = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)
RELATION = re.compile(r'^(\w+)\s+([|}o]{2}(?:--|\.\.)[|{o]{2})\s+(\w+)\s*:\s*("[^"]*"|\w+)$')
ENTITY = re.compile(r"^(\w+)\s*\{$")
ATTRIBUTE = re.compile(r'^(\w+)\s+(\w+)(?:\s+((?:PK|FK|UK)(?:\s*,\s*(?:PK|FK|UK))*))?(?:\s+"[^"]*")?$')


@dataclass
class Diagram:
    """What the Mermaid blocks declare."""

    tables: dict[str, list[tuple[str, str, frozenset[str]]]] = field(default_factory=dict)
    relations: set[frozenset[str]] = field(default_factory=set)


def parse_mermaid(text: str) -> Diagram:
    """Parse every erDiagram block; any line we do not understand is an error."""
    diagram = Diagram()
    blocks = BLOCK.findall(text)
    assert blocks, "docs/database.md has no mermaid block"
    for block in blocks:
        entity: str | None = None
        for raw in block.splitlines():
            line = raw.strip()
            if not line or line.startswith("%%") or line == "erDiagram":
                continue
            if entity is not None:
                if line == "}":
                    entity = None
                    continue
                attribute = ATTRIBUTE.match(line)
                assert attribute, f"cannot parse attribute line in {entity}: {raw!r}"
                keys = frozenset(k.strip() for k in (attribute.group(3) or "").split(",") if k.strip())
                diagram.tables[entity].append((attribute.group(2), attribute.group(1), keys))
                continue
            if start := ENTITY.match(line):
                entity = start.group(1)
                assert entity not in diagram.tables, f"{entity} is drawn twice"
                diagram.tables[entity] = []
                continue
            relation = RELATION.match(line)
            assert relation, f"cannot parse diagram line: {raw!r}"
            diagram.relations.add(frozenset((relation.group(1), relation.group(3))))
        assert entity is None, f"entity {entity} is not closed"
    return diagram


@dataclass
class Schema:
    """What SQLite reports after the migrations."""

    tables: dict[str, list[tuple[str, str, frozenset[str]]]]
    relations: set[frozenset[str]]
    indexes: set[str]


async def migrated_schema(path: Path) -> Schema:
    """Apply the real migrations to a new file and read the schema back with PRAGMAs."""
    store = Store(path)
    await store.open()
    try:
        names = await store.fetchall(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        tables, relations, indexes = {}, set(), set()
        for row in names:
            table = row["name"]
            fks = await store.fetchall(f"PRAGMA foreign_key_list({table})")
            fk_columns = {fk["from"] for fk in fks}
            relations |= {frozenset((table, fk["table"])) for fk in fks}
            columns = []
            for column in await store.fetchall(f"PRAGMA table_info({table})"):
                keys = {"PK"} if column["pk"] else set()
                if column["name"] in fk_columns:
                    keys.add("FK")
                columns.append((column["name"], column["type"], frozenset(keys)))
            tables[table] = columns
            for index in await store.fetchall(f"PRAGMA index_list({table})"):
                if index["origin"] == "c":
                    indexes.add(index["name"])
        return Schema(tables, relations, indexes)
    finally:
        await store.close()


@pytest.fixture(scope="module")
def doc_text() -> str:
    """The documentation page."""
    return DOC.read_text(encoding="utf-8")


async def test_diagram_has_every_table_and_no_other(tmp_path: Path, doc_text: str) -> None:
    """Tables in the diagram are exactly the tables the migrations create."""
    schema, diagram = await migrated_schema(tmp_path / "doc.db"), parse_mermaid(doc_text)
    assert sorted(diagram.tables) == sorted(schema.tables)


async def test_diagram_columns_types_and_keys_match(tmp_path: Path, doc_text: str) -> None:
    """Every table lists its columns in schema order with their type and PK/FK markers."""
    schema, diagram = await migrated_schema(tmp_path / "doc.db"), parse_mermaid(doc_text)
    for table, columns in schema.tables.items():
        drawn = diagram.tables.get(table, [])
        assert [c[0] for c in drawn] == [c[0] for c in columns], f"columns of {table}"
        assert drawn == columns, f"types or keys of {table}"


async def test_diagram_relationships_match_foreign_keys(tmp_path: Path, doc_text: str) -> None:
    """A relationship is drawn for every foreign key, and only for foreign keys."""
    schema, diagram = await migrated_schema(tmp_path / "doc.db"), parse_mermaid(doc_text)
    assert diagram.relations == schema.relations


async def test_indexes_are_documented(tmp_path: Path, doc_text: str) -> None:
    """Every index the migrations create is named in the page, and no index that does not exist."""
    schema = await migrated_schema(tmp_path / "doc.db")
    named = set(re.findall(r"`(\w+_idx)`", doc_text))
    assert named == schema.indexes


def test_parser_rejects_what_it_does_not_understand() -> None:
    """A typo in the diagram fails loudly instead of silently dropping a column."""
    with pytest.raises(AssertionError, match="cannot parse attribute"):
        parse_mermaid("```mermaid\nerDiagram\n    t {\n        TEXT id PK extra\n    }\n```\n")
    with pytest.raises(AssertionError, match="cannot parse diagram line"):
        parse_mermaid("```mermaid\nerDiagram\n    a -- b\n```\n")
    with pytest.raises(AssertionError, match="not closed"):
        parse_mermaid("```mermaid\nerDiagram\n    t {\n        TEXT id PK\n```\n")
    parsed = parse_mermaid(
        '```mermaid\nerDiagram\n    a ||--o{ b : "has"\n    b {\n        TEXT a_id PK, FK "x"\n    }\n```\n'
    )
    assert parsed.tables == {"b": [("a_id", "TEXT", frozenset({"PK", "FK"}))]}
    assert parsed.relations == {frozenset(("a", "b"))}
