"""The layers import downward only (docs/architecture.md §Layers): checked over every import in the
package and the panel, lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jellybit.adapters.store import Store
from jellybit.core import store_port
from jellybit.core.ports import Layouter, TorrentClient

ROOT = Path(__file__).resolve().parents[1]

# Modules at the package's top level that every layer may use: errors, time, ids, log setup, the version.
FOUNDATION = {"errors", "clock", "ident", "logs", "jellybit"}

# What each part may import besides itself and the foundation.
ALLOWED: dict[str, set[str]] = {
    "core": set(),                                  # pure: no I/O, no config, nothing above it
    "config": {"core"},
    "protocol": {"core"},                           # the MQTT contract; vocabularies and limits are core's
    "client": {"core", "config", "protocol"},        # core: the reconnect pacer the panel uses
    "adapters": {"core", "config"},
    "engine": {"core", "config", "protocol"},       # adapters only through the ports; overrides: one model
    "present": {"protocol"},                        # the faces' words and allowed actions: the protocol only
    "transports": {"core", "config", "engine", "protocol", "client", "present"},
    "cli": {"core", "config", "adapters", "engine", "protocol", "client", "app", "ui", "present"},
    "app": {"core", "config", "adapters", "engine", "protocol", "transports", "client"},
    "__main__": {"cli"},
    "ui": {"protocol", "client", "config", "present"},
}
UI_FOUNDATION = {"jellybit", "errors"}              # the panel shows the version and raises ConfigError


def part_of(path: Path) -> str:
    """The layer a source file belongs to: `core`, `engine`, …, `ui`."""
    relative = path.relative_to(ROOT).with_suffix("").parts
    if relative[0] == "ui":
        return "ui"
    return relative[1] if len(relative) > 1 else "jellybit"


def imported(path: Path) -> set[str]:
    """The parts of Jellybit a file imports (`jellybit.core.x` → `core`, `ui.x` → `ui`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "jellybit":
                found.add(parts[1] if len(parts) > 1 else "jellybit")
            elif parts[0] == "ui":
                found.add("ui")
    return found


def sources() -> list[Path]:
    """Every Python file of the package and the panel."""
    return sorted([*ROOT.joinpath("jellybit").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py")])


def test_the_checker_sees_every_part_and_lazy_imports() -> None:
    """The check is not vacuous: it finds the parts, and an import inside a function counts."""
    parts = {part_of(path) for path in sources()}
    assert {"core", "adapters", "engine", "transports", "cli", "protocol", "client", "app", "ui",
            "present"} <= parts
    assert "ui" in imported(ROOT / "jellybit" / "cli" / "local.py")       # `panel` imports it lazily
    assert "adapters" in imported(ROOT / "jellybit" / "app.py")


def layered() -> list[Path]:
    """Every source file but the foundation modules (checked on their own below)."""
    return [path for path in sources() if part_of(path) not in FOUNDATION | {"__init__"}]


@pytest.mark.parametrize("path", layered(), ids=lambda p: str(p.relative_to(ROOT)))
def test_each_file_imports_only_downward(path: Path) -> None:
    """core imports no adapter, engine, transport or config; the engine no adapter; the transports no
    adapter; the presentation part only the protocol; the panel only the protocol, the client, the config
    and the presentation part."""
    part = part_of(path)
    foundation = UI_FOUNDATION if part == "ui" else FOUNDATION
    wrong = imported(path) - ALLOWED[part] - foundation - {part}
    assert not wrong, f"{path.relative_to(ROOT)} ({part}) imports {sorted(wrong)}"


def test_foundation_modules_import_only_each_other() -> None:
    """errors, clock, ident, logs and the package's `__init__` sit under everything."""
    for name in ("errors", "clock", "ident", "logs", "__init__"):
        wrong = imported(ROOT / "jellybit" / f"{name}.py") - FOUNDATION
        assert not wrong, f"jellybit/{name}.py imports {sorted(wrong)}"


def _methods(protocol: type) -> set[str]:
    return {name for name, value in vars(protocol).items() if callable(value) and not name.startswith("_")}


def _store_ports() -> list[type]:
    return [value for value in vars(store_port).values()
            if isinstance(value, type) and value.__module__ == store_port.__name__]


def test_the_sqlite_store_implements_the_store_port() -> None:
    """Every method the engine may ask of the store exists on the SQLite store with the same parameters."""
    import inspect

    for protocol in _store_ports():
        for name in _methods(protocol):
            assert hasattr(Store, name), f"Store lacks {protocol.__name__}.{name}"
            wanted = list(inspect.signature(getattr(protocol, name)).parameters)
            actual = list(inspect.signature(getattr(Store, name)).parameters)
            assert wanted == actual, f"Store.{name}{actual} differs from {protocol.__name__}.{name}{wanted}"


def test_the_engine_asks_the_store_only_what_the_port_names() -> None:
    """A `store.x(...)` call in the engine names a StorePort method (so the port stays the contract)."""
    port = set().union(*(_methods(p) for p in _store_ports()))
    called: set[str] = set()
    for path in ROOT.joinpath("jellybit", "engine").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "store"):
                called.add(node.func.attr)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "store"):
                called.add(node.func.attr)
    assert called, "the scan found no store calls at all"
    assert called <= port, f"not in StorePort: {sorted(called - port)}"


@pytest.mark.parametrize("port", [Layouter, TorrentClient])
def test_the_engine_asks_no_more_than_its_ports(port: type) -> None:
    """No `getattr` probing in the engine: whatever it calls is on the port."""
    for path in ROOT.joinpath("jellybit", "engine").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        probes = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                  and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                  and node.args[1].value in _methods(port)]
        assert not probes, f"{path.relative_to(ROOT)} probes {port.__name__} with getattr"


def test_the_library_wing_does_not_reach_into_the_store() -> None:
    """The library adapter works on the store through core's records and ports, never its modules."""
    wing = ROOT / "jellybit" / "adapters" / "library"
    offenders = [str(path.relative_to(ROOT)) for path in sorted(wing.rglob("*.py"))
                 if "jellybit.adapters.store" in path.read_text(encoding="utf-8")]
    assert offenders == []


def test_no_part_below_the_faces_imports_the_presentation_part() -> None:
    """The words and allowed actions serve the faces; the core, the protocol, the engine and the adapters
    never reach up to them (the engine's rule is `core/states.py: COMMAND_STATES`, which present reads)."""
    below = {"core", "config", "protocol", "client", "adapters", "engine"}
    offenders = [str(path.relative_to(ROOT)) for path in sources()
                 if part_of(path) in below and "present" in imported(path)]
    assert offenders == []
    assert imported(ROOT / "jellybit" / "present" / "actions.py") == {"protocol"}
