-- The layout journal, compact (issue 16; docs/layout.md "What the journal writes").
--
-- A season pack journals thousands of rows that must be durable before the first link is
-- made; 0001's rows carried both full paths, three ULIDs and two timestamps each, in five
-- B-trees (about 600 bytes per file, 3 MB of WAL for 5,000 files). Now a row names its
-- batch by number (apply_batch.seq), its folders by number (link_folder, each absolute
-- folder stored once) and its files by name; its download is its batch's, and its times
-- are its batch's. A link's full paths are `folder.path || '/' || name`.

CREATE TABLE link_folder (
    id   INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE                    -- absolute, without the trailing '/'
);

CREATE TABLE apply_batch_compact (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    download_id TEXT NOT NULL REFERENCES download (id) ON DELETE CASCADE,
    status      TEXT NOT NULL,                   -- open | committed | rolled_back | undone
    created_at  TEXT NOT NULL,
    finished_at TEXT
);
INSERT INTO apply_batch_compact (id, download_id, status, created_at, finished_at)
    SELECT id, download_id, status, created_at, finished_at FROM apply_batch ORDER BY created_at, id;

-- A path's folder: rtrim() drops the trailing run of characters other than '/', then the '/'.
INSERT OR IGNORE INTO link_folder (path)
    SELECT substr(head, 1, length(head) - 1) FROM (
        SELECT rtrim(src_path, replace(src_path, '/', '')) AS head FROM file_link
        UNION SELECT rtrim(dst_path, replace(dst_path, '/', '')) FROM file_link
    ) ORDER BY 1;

CREATE TABLE file_link_compact (
    id           INTEGER PRIMARY KEY,
    batch        INTEGER NOT NULL REFERENCES apply_batch_compact (seq) ON DELETE CASCADE,
    src_folder   INTEGER NOT NULL REFERENCES link_folder (id),
    src_name     TEXT NOT NULL,
    dst_folder   INTEGER NOT NULL REFERENCES link_folder (id),
    dst_name     TEXT NOT NULL,
    kind         TEXT NOT NULL,                  -- video | subtitle | audio | extra
    status       TEXT NOT NULL,                  -- pending | linked | copied | exists | collision | skipped | superseded | removed
    size         INTEGER NOT NULL,
    src_dev      INTEGER,
    src_ino      INTEGER,
    src_mtime_ns INTEGER,
    dst_ino      INTEGER,
    message      TEXT
);
INSERT INTO file_link_compact (batch, src_folder, src_name, dst_folder, dst_name, kind, status, size,
                               src_dev, src_ino, src_mtime_ns, dst_ino, message)
    SELECT b.seq, sf.id, substr(fl.src_path, length(sf.path) + 2), df.id, substr(fl.dst_path, length(df.path) + 2),
           fl.kind, fl.status, fl.size, fl.src_dev, fl.src_ino, fl.src_mtime_ns, fl.dst_ino, fl.message
    FROM file_link fl
    JOIN apply_batch_compact b ON b.id = fl.apply_batch_id
    JOIN link_folder sf ON sf.path = substr(rtrim(fl.src_path, replace(fl.src_path, '/', '')), 1,
                                            length(rtrim(fl.src_path, replace(fl.src_path, '/', ''))) - 1)
    JOIN link_folder df ON df.path = substr(rtrim(fl.dst_path, replace(fl.dst_path, '/', '')), 1,
                                            length(rtrim(fl.dst_path, replace(fl.dst_path, '/', ''))) - 1)
    ORDER BY fl.created_at, fl.id;

DROP TABLE file_link;
DROP TABLE apply_batch;
ALTER TABLE apply_batch_compact RENAME TO apply_batch;
ALTER TABLE file_link_compact RENAME TO file_link;
CREATE INDEX apply_batch_download_idx ON apply_batch (download_id);
CREATE INDEX file_link_batch_idx ON file_link (batch);
CREATE INDEX file_link_dst_idx ON file_link (dst_folder, dst_name);
