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

-- The run history (`sqlock run`, Locker::start_run): one row per run of a
-- job, kept after its lock row is gone. ${runs} and the index names are
-- replaced like ${table}. Times are UTC text from SQLite's clock, as above.
CREATE TABLE IF NOT EXISTS ${runs} (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         VARCHAR(128) NOT NULL,   -- the lock name (not "name#N")
    window_start DATETIME,                -- the --once-per window, else NULL
    host         VARCHAR(255) NOT NULL,
    pid          INTEGER NOT NULL,
    username     VARCHAR(255) NOT NULL,
    program      VARCHAR(1024) NOT NULL,
    fencing_id   INTEGER NOT NULL,        -- the lock row's id
    started      DATETIME NOT NULL,
    ended        DATETIME,
    -- running, succeeded, failed, killed, lost, timed_out (no CHECK: a
    -- newer outcome must not need a schema change; unknown ones read as lost)
    outcome      VARCHAR(16) NOT NULL,
    exit_status  INTEGER,
    exit_signal  INTEGER
);
-- Newest first per name, and a name's runs in a once-per window.
CREATE INDEX IF NOT EXISTS ${runs_name_idx} ON ${runs} (name, started);
-- Pruning by age, and newest first over all names.
CREATE INDEX IF NOT EXISTS ${runs_started_idx} ON ${runs} (started);
-- The reaper's "runs of the lock rows it deletes".
CREATE INDEX IF NOT EXISTS ${runs_fencing_idx} ON ${runs} (fencing_id);

-- Pauses (`sqlock pause`, Locker::pause): a paused job is not run on any
-- host. ${pauses} is replaced like ${table}. A pause is in force while
-- paused_until is NULL or later than now (UTC text, SQLite's clock).
CREATE TABLE IF NOT EXISTS ${pauses} (
    name         VARCHAR(128) NOT NULL PRIMARY KEY,  -- the lock name
    paused_by    VARCHAR(255) NOT NULL,              -- user@host
    reason       VARCHAR(1024) NOT NULL,
    created      DATETIME NOT NULL,
    paused_until DATETIME                            -- NULL: until resumed
);

-- The queue of waiters (Locker::lock with a wait, `sqlock run --wait`): a
-- caller that waits for a name joins it and is served in the order it
-- joined; callers that do not wait let live waiters go first. Each row has
-- a short lease of its own, renewed while its waiter waits, so a waiter
-- that dies leaves the line when it runs out. ${queue} and ${queue_name_idx} are
-- replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${queue} (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,  -- the ticket: arrival order
    lockstring VARCHAR(128) NOT NULL,   -- the name waited for (a semaphore's without "#N")
    waiter     VARCHAR(1024) NOT NULL,  -- the waiter's locked_by
    inbox      VARCHAR(64) NOT NULL,    -- where to wake it ('' for none)
    expires    DATETIME NOT NULL,
    -- When the waiter joined (for the oldest waiter's age in sqlock
    -- metrics). Its default sets it: no statement names it. init
    -- rebuilds a queue made before it with it (SQLite adds no column
    -- with such a default); the rows there then count from then. (No
    -- comma in this comment: SQLite's DROP COLUMN would take it for
    -- the one before the column.)
    joined     DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
-- A name's waiters in arrival order.
CREATE INDEX IF NOT EXISTS ${queue_name_idx} ON ${queue} (lockstring, id);

-- Leaders' values (Locker::campaign, Leadership::proclaim, `sqlock elect`):
-- the value the holder of lock row fencing_id last proclaimed for the name
-- it leads. A row whose lock row is gone means nothing: readers join on the
-- fencing id. ${leaders} is replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${leaders} (
    name       VARCHAR(128) NOT NULL PRIMARY KEY,  -- the lock name
    fencing_id INTEGER NOT NULL,                   -- the leader's lock row
    value      TEXT NOT NULL,
    proclaimed DATETIME NOT NULL
);

-- The guard (sqlock::guard, SQLOCK_GUARD): an INSERT into this view, inside
-- a transaction, fails unless lock row holder_id is still live and held by
-- `holder` by SQLite's clock now. The INSERT takes the database's write
-- lock, which no other writer gets before the transaction ends: from then
-- on nobody can take over, delete or reap the row. SQLite's RAISE() takes
-- only a fixed message (before 3.47), so the error is a JSON path error
-- whose path is the message: it names the lock. ${guard} and ${guard_check}
-- are replaced like ${table}.
CREATE VIEW IF NOT EXISTS ${guard} (holder_id, holder, marker, lock_name) AS
    SELECT NULL, NULL, NULL, NULL WHERE 0;
CREATE TRIGGER IF NOT EXISTS ${guard_check} INSTEAD OF INSERT ON ${guard}
BEGIN
    SELECT json_extract('{}', 'sqlock: lock "' || NEW.lock_name ||
                              '" is no longer held by this holder (lock row ' ||
                              NEW.holder_id || ')')
     WHERE NOT EXISTS (SELECT 1 FROM ${table}
                        WHERE id = NEW.holder_id AND locked_by = NEW.holder
                          AND expires > strftime('%Y-%m-%d %H:%M:%f', 'now'));
END;
