-- sqlock lock table for MariaDB (10.6+) and MySQL (8.0). Idempotent: safe to
-- apply on every start.
--
-- ${table} is replaced by a quoted, validated identifier (`locks` or
-- `ops`.`locks`); ${collation} by the server's exact binary collation for
-- utf8mb4 without trailing-space padding: utf8mb4_nopad_bin on MariaDB,
-- utf8mb4_0900_bin on MySQL. (utf8mb4_bin pads: 'a' and 'a ' would be one
-- name.) The columns are DBIx::Locker's, so a DBIx::Locker program pointed at
-- the same table excludes sqlock holders and vice versa.
CREATE TABLE IF NOT EXISTS ${table} (
    -- AUTO_INCREMENT: ids are never reused (the counter is persistent since
    -- MariaDB 10.2.4 and MySQL 8.0), and sqlock draws them in the order
    -- holders get a name (docs/mariadb.md): the id is a fencing token.
    id         BIGINT NOT NULL AUTO_INCREMENT,
    -- 128 characters: at least the 128 bytes sqlock allows for a name.
    lockstring VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    -- UTC, always the server's clock (UTC_TIMESTAMP(3)), never the client's.
    created    DATETIME(3) NOT NULL,
    expires    DATETIME(3) NOT NULL,
    -- sqlock writes at most 1024 bytes; other programs may write more.
    locked_by  MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE ${collation},
    PRIMARY KEY (id),
    UNIQUE KEY sqlock_lockstring (lockstring),
    -- Keeps the reaper's and take-over's "expires <= now" cheap.
    KEY sqlock_expires (expires)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- The run history (`sqlock run`, Locker::start_run): one row per run of a
-- job, kept after its lock row is gone. ${runs} is replaced like ${table};
-- times are UTC from the server's clock, as above.
CREATE TABLE IF NOT EXISTS ${runs} (
    id           BIGINT NOT NULL AUTO_INCREMENT,
    -- the lock name (not "name#N")
    name         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    -- the --once-per window, else NULL
    window_start DATETIME(3) NULL,
    host         VARCHAR(255) NOT NULL,
    pid          BIGINT NOT NULL,
    username     VARCHAR(255) NOT NULL,
    program      VARCHAR(1024) NOT NULL,
    -- the lock row's id
    fencing_id   BIGINT NOT NULL,
    started      DATETIME(3) NOT NULL,
    ended        DATETIME(3) NULL,
    -- running, succeeded, failed, killed, lost, timed_out (no CHECK: a
    -- newer outcome must not need a schema change; unknown ones read as lost)
    outcome      VARCHAR(16) NOT NULL,
    exit_status  INT NULL,
    exit_signal  INT NULL,
    PRIMARY KEY (id),
    -- Newest first per name, and a name's runs in a once-per window.
    KEY sqlock_runs_name (name, started),
    -- Pruning by age, and newest first over all names.
    KEY sqlock_runs_started (started),
    -- The reaper's "runs of the lock rows it deletes".
    KEY sqlock_runs_fencing (fencing_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- Pauses (`sqlock pause`, Locker::pause): a paused job is not run on any
-- host. ${pauses} is replaced like ${table}. A pause is in force while
-- paused_until is NULL or later than UTC_TIMESTAMP(3) (the server's clock).
CREATE TABLE IF NOT EXISTS ${pauses} (
    -- the lock name
    name         VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    -- user@host
    paused_by    VARCHAR(255) NOT NULL,
    reason       VARCHAR(1024) NOT NULL,
    created      DATETIME(3) NOT NULL,
    -- NULL: until resumed
    paused_until DATETIME(3) NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- The queue of waiters (Locker::lock with a wait, `sqlock run --wait`): a
-- caller that waits for a name joins it and is served in the order it
-- joined; callers that do not wait let live waiters go first. Each row has
-- a short lease of its own, renewed while its waiter waits, so a waiter
-- that dies leaves the line when it runs out. ${queue} is replaced like
-- ${table}.
CREATE TABLE IF NOT EXISTS ${queue} (
    id         BIGINT NOT NULL AUTO_INCREMENT,  -- the ticket: arrival order
    -- the name waited for (a semaphore's without "#N")
    lockstring VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    waiter     VARCHAR(1024) NOT NULL,  -- the waiter's locked_by
    inbox      VARCHAR(64) NOT NULL,    -- where to wake it ('' for none)
    expires    DATETIME(3) NOT NULL,
    -- When the waiter joined (for the oldest waiter's age in sqlock
    -- metrics). Its default sets it: no statement names it. init adds it
    -- to a queue made before it; the rows there then count from then.
    joined     DATETIME(3) NOT NULL DEFAULT (UTC_TIMESTAMP(3)),
    PRIMARY KEY (id),
    -- A name's waiters in arrival order.
    KEY sqlock_queue_name (lockstring, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- Leaders' values (Locker::campaign, Leadership::proclaim, `sqlock elect`):
-- the value the holder of lock row fencing_id last proclaimed for the name
-- it leads. A row whose lock row is gone means nothing: readers join on the
-- fencing id. ${leaders} is replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${leaders} (
    -- the lock name
    name       VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    fencing_id BIGINT NOT NULL,  -- the leader's lock row
    value      TEXT NOT NULL,
    proclaimed DATETIME(6) NOT NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- The fencing register (docs/mariadb.md, "Galera multi-primary"), used on
-- Galera: for each name, the largest lock row id handed out for it, written
-- in the transaction that takes the name, and only by an id larger than the
-- one there (else -1, which the CHECK refuses: that attempt is made again).
-- Certification then orders the ids of every node. A name's row is also its
-- turn there, locked for the length of a batch (in place of GET_LOCK, which
-- is one node's). The reaper deletes the rows no lock row uses that nobody
-- wrote for a day. ${fencing} is replaced like ${table}.
CREATE TABLE IF NOT EXISTS ${fencing} (
    -- the lock row's name, or a name whose turn it is
    name     VARCHAR(128) CHARACTER SET utf8mb4 COLLATE ${collation} NOT NULL,
    last_id  BIGINT NOT NULL,
    -- the id whose holder last released the name, written with the delete:
    -- a release sent again after its answer was lost reads here whether the
    -- first went through
    released BIGINT NOT NULL DEFAULT 0,
    written  DATETIME(3) NOT NULL,
    PRIMARY KEY (name),
    CHECK (last_id >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${collation};

-- The guard (sqlock::guard, SQLOCK_GUARD): CALLed inside a transaction on
-- this database, it fails unless lock row holder_id is still live and held
-- by `holder` by the server's clock now, and then keeps the row (and, for a
-- shared hold, the name's marker row `marker`) from being taken over,
-- deleted or reaped until that transaction ends: a shared row lock, which
-- every such statement must wait for. The holder's own renewal waits for it
-- too (InnoDB has no lock that lets an update of another column by): keep a
-- guarded transaction shorter than the lease. ${guard} is replaced like
-- ${table}. Its error's SQLSTATE is SQLK1, which sqlock reads as a lost lock.
-- On a server with Galera's variables (MariaDB's), init adds a check for
-- where wsrep_on: the rows written instead of read (and written back as
-- they were), since a take-over, release or reap on another node does not
-- wait for a row lock of this node, but certification fails whichever of
-- it and the guarded transaction comes second.
CREATE PROCEDURE IF NOT EXISTS ${guard}(IN holder_id BIGINT,
                                        IN holder MEDIUMTEXT CHARACTER SET utf8mb4,
                                        IN marker VARCHAR(128) CHARACTER SET utf8mb4,
                                        IN lock_name VARCHAR(128) CHARACTER SET utf8mb4)
    MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
    DECLARE held BIGINT DEFAULT NULL;
    DECLARE markers BIGINT DEFAULT 0;
    DECLARE message VARCHAR(512);
${galera_guard}
    -- A shared hold's marker first: once it is locked nobody takes the name
    -- over, so a holder row found live next is still covered by it.
    IF marker <> '' THEN
        SELECT COUNT(*) INTO markers FROM ${table}
         WHERE lockstring = marker COLLATE ${collation} LOCK IN SHARE MODE;
    END IF;
    SELECT id INTO held FROM ${table}
     WHERE id = holder_id AND COALESCE(locked_by, '') = holder COLLATE ${collation}
       AND expires > UTC_TIMESTAMP(3)
      LOCK IN SHARE MODE;
${galera_guard_end}
    IF held IS NULL THEN
        SET message = CONCAT('sqlock: lock "', lock_name,
                             '" is no longer held by this holder (lock row ', holder_id, ')');
        SIGNAL SQLSTATE 'SQLK1' SET MESSAGE_TEXT = message;
    END IF;
END;
