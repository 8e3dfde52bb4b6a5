// Connection poolers (PgBouncer) in front of the server, and what they allow.
//
// A pooler in transaction or statement mode hands the server connection
// behind a client connection to someone else after every transaction. What
// lives in a server session then breaks: named prepared statements (42P05
// "already exists" on one, 26000 "does not exist" on another) and LISTEN (the
// notification reaches whichever client has that server connection next, if
// any). The URL says which pooler is in front, in sqlock's own query
// parameter, which is taken out before the URL goes to libpq:
//
//   postgresql://app@pgbouncer:6432/ops?pooler=transaction
//
//   none (default), session   prepared statements, wake-ups by LISTEN/NOTIFY
//   transaction, statement    statements kept on each server session lent
//                             (PgConnection), waiters poll with backoff
//
// Without the parameter, the symptoms are recognised (see PgTarget) and the
// Locker switches to the pooled path on the first one.
#pragma once

#include <string>

namespace sqlock::detail::postgres {

enum class PoolMode { none, session, transaction, statement };

struct PoolerSetting {
    PoolMode mode = PoolMode::none;
    std::string libpq_url;  // the URL without sqlock's `pooler` parameter
};

/// Takes `pooler=...` out of the query of PostgreSQL URL `url`. Throws
/// errc::invalid_argument naming `shown` (the redacted URL) for a value
/// other than none, session, transaction or statement, or a repeated one.
PoolerSetting split_pooler(const std::string& url, const std::string& shown);

/// "none", "session", "transaction", "statement".
const char* pool_mode_name(PoolMode mode) noexcept;

/// True for the modes that keep one server session per client connection.
inline bool session_bound(PoolMode mode) noexcept {
    return mode == PoolMode::none || mode == PoolMode::session;
}

}  // namespace sqlock::detail::postgres
