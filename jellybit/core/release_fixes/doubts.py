"""Numbers a name may mean two ways: the reading stays, the other one is reported beside it.

`S01E01E03` lists episodes 1 and 3 (guessit's and moistari/rls' reading) but is also written for a file
holding episodes 1 to 3; `Show 01-02-03` is a date (2003-02-01) or episodes 1, 2 and 3. No name-level
rule tells them apart (the corpus has names of both kinds), so the parser keeps the first reading and
reports the other in `ambiguous_episodes`; the recognizer lets the provider's data settle it or asks
(`numbering_conflict`, core/path_numbering.py).
"""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import Guess, Reading, base_name, note

# `S01E01E03`, `E1E3`, `S01E01.E03`: episodes written one after another, not as a range (`E01-E03`)
_LISTED = re.compile(r"(?i)(?<![a-z])(?:s\d{1,4})?e\d{1,4}(?:[._]?e\d{1,4})+(?![\d])")
# `Show 01-02-03`: three numbers that count up by one, read as a date
_COUNTED = re.compile(r"(?<![\d-])(?<!\d\.)(\d{1,2})-(\d{1,2})-(\d{1,2})(?![\d-])")
_MAX_SPAN = 50


def fix_ambiguous_numbers(r: Reading, guess: Guess) -> None:
    """`S01E01E03` (episodes 1 and 3, or 1 to 3), `Show 01-02-03` (a date, or episodes 1–3): the other
    reading is reported in `ambiguous_episodes`; the reading itself is kept."""
    base = base_name(r["text"])
    episodes = sorted(set(r["episodes"]))
    other: list[int] = []
    if len(episodes) >= 2 and _LISTED.search(base):
        span = list(range(episodes[0], episodes[-1] + 1))
        if span != episodes and len(span) <= _MAX_SPAN:
            other = span
    elif r["air_date"] and not episodes and not r["absolute_episodes"]:
        counted = _COUNTED.search(base)
        if counted:
            numbers = [int(n) for n in counted.groups()]
            if numbers[0] >= 1 and numbers == list(range(numbers[0], numbers[0] + 3)):
                other = numbers
    if other:
        r["ambiguous_episodes"] = other
        note(r, "ambiguous_numbers")
