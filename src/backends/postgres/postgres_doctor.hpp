// What `sqlock doctor` reports about a PostgreSQL lock table and the way to it.
#pragma once

#include "postgres_target.hpp"
#include "sqlock/diagnosis.hpp"

namespace sqlock::detail::postgres {

/// Probes the server behind `target` on connections of its own and adds the
/// facts and problems to `out`:
///   - server version; primary, standby (in recovery) or read-only;
///   - the pooler the URL names, and whether server sessions outlive a
///     transaction (two client connections, one in a transaction: a pooler
///     in transaction mode lets the other one's statements move between
///     server sessions, or gives both the same one);
///   - whether waiters are woken by LISTEN/NOTIFY (a notification sent to
///     ourselves through a second connection must arrive within 2 s) or poll;
///   - the clock difference between this host and the database;
///   - synchronous replication settings; the table and the role's grants.
/// Throws errc::connection when the server cannot be reached.
void diagnose(const PgTarget& target, Diagnosis& out);

}  // namespace sqlock::detail::postgres
