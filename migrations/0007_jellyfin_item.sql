-- Done means in Jellyfin (issue 25; docs/jellyfin.md): whether Jellyfin lists a done download,
-- and the item it became. NULL status = never asked (Jellyfin off, or done before this).
ALTER TABLE download ADD COLUMN jellyfin_status TEXT;       -- pending | found | missing | unreachable
ALTER TABLE download ADD COLUMN jellyfin_item_id TEXT;      -- Jellyfin's item id (the movie or the series)
ALTER TABLE download ADD COLUMN jellyfin_url TEXT;          -- the item's page in Jellyfin's web client
ALTER TABLE download ADD COLUMN jellyfin_note TEXT;         -- what to check, when not found in time
ALTER TABLE download ADD COLUMN jellyfin_checked_at TEXT;   -- the last look-up
