-- sqlock lock table for PostgreSQL. Idempotent: safe to apply on every start.
--
-- ${table} and ${index} are replaced by quoted, validated identifiers
-- (${table} may be schema-qualified: "ops"."locks").
-- The columns are DBIx::Locker's, so a DBIx::Locker program pointed at the
-- same table excludes sqlock holders and vice versa.
CREATE TABLE IF NOT EXISTS ${table} (
    -- bigserial: ids are strictly increasing and never reused, a fencing token.
    id         bigserial PRIMARY KEY,
    lockstring varchar(128) NOT NULL UNIQUE,
    -- Always the server's clock (now()), never the client's.
    created    timestamptz NOT NULL DEFAULT now(),
    expires    timestamptz NOT NULL,
    locked_by  text
);

-- Keeps the reaper's and take-over's "expires <= now()" cheap.
CREATE INDEX IF NOT EXISTS ${index} ON ${table} (expires);

-- The run history (`sqlock run`, Locker::start_run): one row per run of a
-- job, kept after its lock row is gone. ${runs} and the index names are
-- replaced like ${table}; the times are the server's clock.
CREATE TABLE IF NOT EXISTS ${runs} (
    id           bigserial PRIMARY KEY,
    name         varchar(128) NOT NULL,   -- the lock name (not "name#N")
    window_start timestamptz,             -- the --once-per window, else NULL
    host         varchar(255) NOT NULL,
    pid          bigint NOT NULL,
    username     varchar(255) NOT NULL,
    program      varchar(1024) NOT NULL,
    fencing_id   bigint NOT NULL,         -- the lock row's id
    started      timestamptz NOT NULL DEFAULT now(),
    ended        timestamptz,
    -- running, succeeded, failed, killed, lost, timed_out (no CHECK: a
    -- newer outcome must not need a schema change; unknown ones read as lost)
    outcome      varchar(16) NOT NULL,
    exit_status  integer,
    exit_signal  integer
);
-- Newest first per name, and a name's runs in a once-per window.
CREATE INDEX IF NOT EXISTS ${runs_name_idx} ON ${runs} (name, started);
-- Pruning by age, and newest first over all names.
CREATE INDEX IF NOT EXISTS ${runs_started_idx} ON ${runs} (started);
-- The reaper's "runs of the lock rows it deletes".
CREATE INDEX IF NOT EXISTS ${runs_fencing_idx} ON ${runs} (fencing_id);

-- Pauses (`sqlock pause`, Locker::pause): a paused job is not run on any
-- host. ${pauses} is replaced like ${table}. A pause is in force while
-- paused_until is NULL or later than now() (the server's clock).
CREATE TABLE IF NOT EXISTS ${pauses} (
    name         varchar(128) PRIMARY KEY,  -- the lock name
    paused_by    varchar(255) NOT NULL,     -- user@host
    reason       varchar(1024) NOT NULL,
    created      timestamptz NOT NULL DEFAULT now(),
    paused_until timestamptz                -- NULL: until resumed
);

-- The queue of waiters (Locker::lock with a wait, `sqlock run --wait`): a
-- caller that waits for a name joins it and is served in the order it
-- joined; callers that do not wait let live waiters go first. Each row has
-- a short lease of its own, renewed while its waiter waits, so a waiter
-- that dies leaves the line when it runs out. ${queue} and ${queue_name_idx} are
-- replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${queue} (
    id         bigserial PRIMARY KEY,    -- the ticket: arrival order
    lockstring varchar(128) NOT NULL,    -- the name waited for (a semaphore's without "#N")
    waiter     varchar(1024) NOT NULL,   -- the waiter's locked_by
    inbox      varchar(64) NOT NULL,     -- the LISTEN channel that wakes it ('' for none)
    expires    timestamptz NOT NULL,
    -- When the waiter joined (for the oldest waiter's age in sqlock
    -- metrics). Its default sets it: no statement names it. init adds it
    -- to a queue made before it; the rows there then count from then.
    joined     timestamptz NOT NULL DEFAULT now()
);
-- A name's waiters in arrival order.
CREATE INDEX IF NOT EXISTS ${queue_name_idx} ON ${queue} (lockstring, id);

-- Leaders' values (Locker::campaign, Leadership::proclaim, `sqlock elect`):
-- the value the holder of lock row fencing_id last proclaimed for the name
-- it leads. A row whose lock row is gone means nothing: readers join on the
-- fencing id. ${leaders} is replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${leaders} (
    name       varchar(128) PRIMARY KEY,  -- the lock name
    fencing_id bigint NOT NULL,           -- the leader's lock row
    value      text NOT NULL,
    proclaimed timestamptz NOT NULL DEFAULT now()
);

-- The guard (sqlock::guard, SQLOCK_GUARD): run inside a transaction on this
-- database, it fails unless lock row holder_id is still live and held by
-- `holder` by the database's clock now (clock_timestamp(), not the
-- transaction's start), and then keeps the row (and, for a shared hold, the
-- name's marker row `marker`) from being taken over, deleted or reaped until
-- that transaction ends. FOR KEY SHARE conflicts with every statement that
-- changes a row's id or deletes it, not with a renewal: the holder's own
-- heartbeat goes on. ${guard} is replaced like ${table}. Its error's
-- SQLSTATE is SQLK1, which sqlock reads as a lost lock.
CREATE OR REPLACE FUNCTION ${guard}(holder_id bigint, holder text, marker text, lock_name text)
RETURNS bigint LANGUAGE plpgsql AS $guard$
BEGIN
    -- A shared hold's marker first: once it is locked nobody takes the name
    -- over, so a holder row found live next is still covered by it.
    IF marker <> '' THEN
        PERFORM 1 FROM ${table} WHERE lockstring = marker FOR KEY SHARE;
    END IF;
    PERFORM 1 FROM ${table}
     WHERE id = holder_id AND locked_by = holder AND expires > clock_timestamp()
       FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'sqlock: lock "%" is no longer held by this holder (lock row %)',
            lock_name, holder_id USING ERRCODE = 'SQLK1';
    END IF;
    RETURN holder_id;
END
$guard$;
