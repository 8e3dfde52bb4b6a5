// What sqlock sets on a PostgreSQL session of its own, whatever the server's,
// the database's or the role's defaults say.
//
// A session is sqlock's own when no pooler stands between (or a pooler in
// session mode: PgTarget::session_bound()). Its settings travel with the
// session's first statement where that is a simple query (PgConnection), or
// in a round trip of their own when the session opens (the listener), never
// with each acquisition. Through a pooler in transaction or statement mode,
// server sessions are shared with other clients: nothing is set there, and
// the statements stand on their own (read_committed below; a serialization
// failure is sent again, PgConnection::send()).
//
// What is not set, on purpose:
//   - default_transaction_read_only: a server that says it is read-only is
//     one an HA manager fenced (a demoted primary; libpq's
//     target_session_attrs=read-write reads it the same way). Writing there
//     could make two holders. A wait waits through it (obstacle.hpp).
//   - idle_in_transaction_session_timeout: sqlock's sessions are never idle
//     inside a transaction (every statement commits by itself).
//   - synchronous_commit: never lowered (docs/postgres-production.md).
#pragma once

#include <string>
#include <vector>

#include "postgres_target.hpp"

namespace sqlock::detail::postgres {

/// One setting sqlock gives its own sessions, and why.
struct SessionSetting {
    std::string name;
    std::string value;
};

/// The settings of a session of sqlock's own on a server of
/// `server_version` (as PQserverVersion() gives it: 150004), with the
/// target's timeout. Settings the server does not know are left out.
std::vector<SessionSetting> session_settings(const PgTarget& target, int server_version);

/// session_settings() as one simple query's statements ("SET a = 'x';\n"...),
/// for a message that runs a statement of its own after them.
std::string session_setup_sql(const PgTarget& target, int server_version);

/// The first statement of a simple query of several statements, whose later
/// statements must read what was committed before them (each a snapshot of
/// its own): READ COMMITTED for its transaction, whatever
/// default_transaction_isolation says on a server session that may not be
/// sqlock's. Under REPEATABLE READ or SERIALIZABLE the statement after the
/// turn (an advisory lock) would read a snapshot from before the turn was
/// granted, and miss what the previous holder of the turn wrote.
inline constexpr const char* read_committed = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED;\n";

}  // namespace sqlock::detail::postgres
