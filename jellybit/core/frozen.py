"""Fast builds and copies of plain frozen dataclasses, for loops over thousands of items (pure).

`dataclasses.replace` and a frozen dataclass's `__init__` cost several microseconds each
(one `object.__setattr__` per field, keyword handling); a season pack builds tens of
thousands of plan items and journal rows. These helpers fill the instance dictionary
directly, which gives the same object for *plain* frozen dataclasses: no `__post_init__`,
no `__slots__`, no `cached_property`, every field in `__init__`. Any other class falls back to
the normal path.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")

_PLAIN: dict[type, tuple[tuple[str, ...], frozenset[str]] | None] = {}


def _plain_fields(cls: type) -> tuple[tuple[str, ...], frozenset[str]] | None:
    """The field names (in order, and as a set) of a plain frozen dataclass, or None: no fast path."""
    if cls not in _PLAIN:
        plain = (
            dataclasses.is_dataclass(cls)
            and cls.__dataclass_params__.frozen                       # type: ignore[attr-defined]
            and not hasattr(cls, "__post_init__")
            and not hasattr(cls, "__slots__")
            and all(f.init for f in dataclasses.fields(cls))
            # A cached_property keeps its value in the instance dictionary: a copy must not inherit it.
            and not any(
                isinstance(v, functools.cached_property) for c in cls.__mro__ for v in vars(c).values()
            )
        )
        names = tuple(f.name for f in dataclasses.fields(cls)) if plain else ()
        _PLAIN[cls] = (names, frozenset(names)) if plain else None
    return _PLAIN[cls]


def evolve(obj: T, **changes: Any) -> T:
    """Return a copy of a frozen dataclass instance with some fields changed (like dataclasses.replace)."""
    cls = type(obj)
    plain = _PLAIN[cls] if cls in _PLAIN else _plain_fields(cls)
    if plain is None:
        return dataclasses.replace(obj, **changes)                    # type: ignore[type-var]
    if not changes.keys() <= plain[1]:
        raise TypeError(f"{cls.__name__} has no field(s) {sorted(changes.keys() - plain[1])}")
    new = object.__new__(cls)
    state = new.__dict__
    state.update(obj.__dict__)
    state.update(changes)
    return new


def build(cls: type[T], values: Sequence[Any]) -> T:
    """Build a frozen dataclass instance from every field's value, in field order (like cls(*values))."""
    plain = _PLAIN[cls] if cls in _PLAIN else _plain_fields(cls)
    if plain is None:
        return cls(*values)
    names = plain[0]
    if len(values) != len(names):
        raise TypeError(f"{cls.__name__} takes {len(names)} values, got {len(values)}")
    new = object.__new__(cls)
    new.__dict__.update(zip(names, values, strict=False))       # lengths checked above
    return new
