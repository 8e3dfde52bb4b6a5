-- sqlock lock table for SQLite. Idempotent: safe to apply on every start.
--
-- ${table} and ${index} are replaced by quoted, validated identifiers.
-- The columns are DBIx::Locker's, so a DBIx::Locker program pointed at the
-- same table excludes sqlock holders and vice versa.
CREATE TABLE IF NOT EXISTS ${table} (
    -- AUTOINCREMENT: ids are strictly increasing and never reused, even after
    -- the newest row is deleted, which makes the id usable as a fencing token.
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    lockstring VARCHAR(128) NOT NULL UNIQUE,
    -- UTC text 'YYYY-MM-DD HH:MM:SS.mmm' from SQLite's clock: sorts as time.
    created    DATETIME NOT NULL,
    expires    DATETIME NOT NULL,
    locked_by  VARCHAR(1024)
);

-- Keeps the reaper's and take-over's "expires <= now" cheap.
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires);
