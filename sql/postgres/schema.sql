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
