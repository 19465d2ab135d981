-- Jellybit initial schema (seed 000 model + state_transition + command de-duplication).
-- Conventions: lowercase ULID TEXT keys written by the application; timestamps are
-- RFC 3339 UTC text with a Z suffix written by the application (no DEFAULT);
-- enums are TEXT validated in code; children cascade on delete.

CREATE TABLE download (
    id                TEXT PRIMARY KEY,
    source_type       TEXT NOT NULL,             -- magnet | torrent | url | infohash | adopted
    source_ref        TEXT NOT NULL,             -- magnet / URL / infohash / torrent name
    display_name      TEXT NOT NULL DEFAULT '',
    context           TEXT NOT NULL DEFAULT '',
    state             TEXT NOT NULL,
    error_code        TEXT,
    error_msg         TEXT,
    qbt_tag           TEXT NOT NULL,             -- per-download tag in qBittorrent
    source_miss_count INTEGER NOT NULL DEFAULT 0,
    content_path      TEXT,                      -- qBittorrent's content_path, as qBittorrent sees it
    save_path         TEXT,
    total_size        INTEGER,                   -- bytes; NULL = not known yet
    progress          REAL NOT NULL DEFAULT 0,   -- 0..1
    dl_speed          INTEGER NOT NULL DEFAULT 0,
    eta               INTEGER,                   -- seconds; NULL = unknown
    torrent_state     TEXT,                      -- qBittorrent's own state string
    source_added_at   TEXT,
    completed_at      TEXT,
    retried_at        TEXT,
    defer_until       TEXT,
    settled_at        TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX download_state_idx ON download (state);

CREATE TABLE download_infohash (
    infohash    TEXT NOT NULL,                   -- lowercase hex: 40 = v1, 64 = v2
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,                   -- v1 | v2
    created_at  TEXT NOT NULL,
    PRIMARY KEY (infohash, download_id)
);
CREATE INDEX download_infohash_download_idx ON download_infohash (download_id);

CREATE TABLE download_torrent (
    download_id TEXT PRIMARY KEY REFERENCES download (id) ON DELETE CASCADE,
    data        BLOB NOT NULL
);

CREATE TABLE recognition (
    id             TEXT PRIMARY KEY,
    download_id    TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    attempt_no     INTEGER NOT NULL,
    is_current     INTEGER NOT NULL,             -- 0 / 1
    media_type     TEXT,                         -- movie | series
    title          TEXT,
    original_title TEXT,
    year           INTEGER,
    provider       TEXT,                         -- tmdb | tvdb | tvmaze
    provider_id    TEXT,
    confidence     REAL,                         -- 0..1, computed by code
    recommendation TEXT,                         -- none | low | medium | strong
    reasons        TEXT NOT NULL,                -- JSON list of {code, message, weight}
    raw_llm        TEXT,
    plan           TEXT,                         -- canonical JSON plan
    created_at     TEXT NOT NULL
);
CREATE INDEX recognition_download_idx ON recognition (download_id);
CREATE INDEX recognition_provider_idx ON recognition (provider, provider_id);

CREATE TABLE metadata_candidate (
    id             TEXT PRIMARY KEY,
    recognition_id TEXT NOT NULL REFERENCES recognition (id) ON DELETE CASCADE,
    provider       TEXT NOT NULL,
    provider_id    TEXT NOT NULL,
    media_type     TEXT,
    title          TEXT,
    original_title TEXT,
    year           INTEGER,
    url            TEXT,
    poster_url     TEXT,
    overview       TEXT,
    distance       REAL,
    details        TEXT,                         -- JSON: seasons and episode counts
    chosen         INTEGER NOT NULL,             -- 0 / 1
    created_at     TEXT NOT NULL
);
CREATE INDEX metadata_candidate_recognition_idx ON metadata_candidate (recognition_id);

CREATE TABLE hint (
    id          TEXT PRIMARY KEY,
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX hint_download_idx ON hint (download_id);

CREATE TABLE override (
    id          TEXT PRIMARY KEY,
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    field       TEXT NOT NULL,
    value       TEXT NOT NULL,                   -- JSON value
    created_at  TEXT NOT NULL,
    UNIQUE (download_id, field)
);

CREATE TABLE apply_batch (
    id          TEXT PRIMARY KEY,
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    status      TEXT NOT NULL,                   -- open | committed | rolled_back | undone
    created_at  TEXT NOT NULL,
    finished_at TEXT
);
CREATE INDEX apply_batch_download_idx ON apply_batch (download_id);

CREATE TABLE file_link (
    id             TEXT PRIMARY KEY,
    download_id    TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    apply_batch_id TEXT NOT NULL REFERENCES apply_batch (id) ON DELETE CASCADE,
    src_path       TEXT NOT NULL,
    dst_path       TEXT NOT NULL,
    kind           TEXT NOT NULL,                -- video | subtitle | audio | extra
    status         TEXT NOT NULL,                -- pending | linked | copied | exists | collision | skipped | superseded | removed
    size           INTEGER NOT NULL,
    src_dev        INTEGER,
    src_ino        INTEGER,
    src_mtime_ns   INTEGER,
    dst_ino        INTEGER,
    message        TEXT,
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX file_link_download_idx ON file_link (download_id);
CREATE INDEX file_link_batch_idx ON file_link (apply_batch_id);
CREATE INDEX file_link_dst_idx ON file_link (dst_path);

CREATE TABLE state_transition (
    id          TEXT PRIMARY KEY,
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    from_state  TEXT,                            -- NULL for the ingest row
    to_state    TEXT NOT NULL,
    reason      TEXT NOT NULL,
    actor       TEXT NOT NULL,                   -- worker | human | reconcile
    created_at  TEXT NOT NULL
);
CREATE INDEX state_transition_download_idx ON state_transition (download_id);

CREATE TABLE command_result (
    command     TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    response    TEXT NOT NULL,                   -- JSON response as sent
    created_at  TEXT NOT NULL,
    PRIMARY KEY (command, transaction_id)
);

CREATE TABLE metadata_cache (
    key         TEXT PRIMARY KEY,                -- provider + request
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
