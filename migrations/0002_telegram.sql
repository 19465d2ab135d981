-- The Telegram transport's own persistence: its ping queue, the update ids it has handled,
-- and a few named values (the event cursor). The engine never reads these tables.

CREATE TABLE telegram_ping (
    id              TEXT PRIMARY KEY,            -- lowercase ULID
    download_id     TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    chat_id         INTEGER NOT NULL,
    kind            TEXT NOT NULL,               -- review | done | failed
    dedupe_key      TEXT NOT NULL,               -- '<state>@<transition time>', a reminder, a request
    status          TEXT NOT NULL,               -- pending | sent | superseded | dropped
    attempts        INTEGER NOT NULL,
    next_attempt_at TEXT NOT NULL,
    last_error      TEXT,
    message_id      INTEGER,                     -- set once sent
    has_photo       INTEGER NOT NULL,            -- 1 = sent as a photo with a caption
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    UNIQUE (download_id, chat_id, dedupe_key)
);
CREATE INDEX telegram_ping_due_idx ON telegram_ping (status, next_attempt_at);
CREATE INDEX telegram_ping_message_idx ON telegram_ping (chat_id, message_id);

CREATE TABLE telegram_update (
    update_id   INTEGER PRIMARY KEY,             -- Telegram's update_id, handled once
    created_at  TEXT NOT NULL
);

CREATE TABLE telegram_value (
    key         TEXT PRIMARY KEY,                -- event_cursor
    value       TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
