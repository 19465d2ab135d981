"""One size limit per field a human or a client sends; ingest, commands, prompt, protocol and UI use it."""

from __future__ import annotations

MAX_ID_CHARS = 64                  # a download or candidate id (a ULID is 26)
MAX_TRANSACTION_CHARS = 128
MAX_SOURCE_CHARS = 65_536          # a magnet with many trackers
MAX_CONTEXT_CHARS = 4_000          # the sentence given with a torrent, as ingest keeps and the LLM reads it
MAX_HINT_CHARS = 2_000             # one hint, as `refine` keeps and the LLM reads it
MAX_REASON_CHARS = 500             # why a human rejected a download
MAX_TITLE_CHARS = 300              # a title a human pins
MAX_PROVIDER_ID_CHARS = 32
MAX_PATH_CHARS = 4_096             # a source path a per-file override names
MAX_FILE_OVERRIDES = 100_000       # files one apply may pin
MAX_EPISODES_PER_FILE = 50
MAX_EPISODE = 100_000              # an episode a human pins
MAX_SEASON = 1_000                 # a season a human pins
MIN_YEAR, MAX_YEAR = 1870, 2200
MAX_LIST_LIMIT = 500
MAX_LIST_OFFSET = 1_000_000_000    # far beyond any history; keeps SQLite's 64-bit OFFSET safe
# What a release name, a path or a user's words may state (not a wire limit): year-numbered seasons
# (S2024) exist, 10,000 does not; a daily show's absolute numbers stay under 20,000.
MAX_READ_SEASON = 3_000
MAX_READ_EPISODE = 20_000
MAX_LIST_TEXT_CHARS = 200
MAX_DEFER_HOURS = 24 * 365
