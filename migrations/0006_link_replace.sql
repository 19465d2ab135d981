-- Better copies (docs/layout.md "Better copies"): a new link that replaces another download's
-- library file of the same work names the row it replaces, journaled with the batch before any
-- file is touched. The replaced row turns `replaced` when the batch commits; undoing the new
-- link puts the old one back and turns it live again.
CREATE TABLE link_replace (
    link_id     INTEGER PRIMARY KEY REFERENCES file_link (id) ON DELETE CASCADE,
    replaced_id INTEGER NOT NULL REFERENCES file_link (id) ON DELETE CASCADE
);
CREATE INDEX link_replace_replaced_idx ON link_replace (replaced_id);
