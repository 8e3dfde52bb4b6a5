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
