-- Recognize as soon as the file list is known (issue 25; docs/state-machine.md): 1 while a download
-- is recognized, in review or decided but qBittorrent has not completed its files yet; 0 otherwise
-- (and for every download recognized before this column existed).
ALTER TABLE download ADD COLUMN awaiting_files INTEGER NOT NULL DEFAULT 0;
