// PgTarget — everything a PostgreSQL connection needs to know about its lock
// table, worked out once per Locker and shared by its connections.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "contract/table_family.hpp"
#include "loading/url.hpp"
#include "postgres_conninfo.hpp"
#include "postgres_pooler.hpp"
#include "postgres_redactor.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail::postgres {

struct PgTarget {
    /// `table` must be validated (validate_table_name with allow_schema).
    /// Throws errc::invalid_argument for a URL libpq cannot parse or a bad
    /// `pooler` parameter. `timeout` bounds every round trip (see
    /// bounded_conninfo, Armed).
    PgTarget(DatabaseUrl url, std::string table, duration timeout);

    /// Whether server sessions outlive a transaction: the URL says no pooler
    /// or a session pooler, and no symptom of transaction pooling was seen.
    /// Then statements are prepared and wake-ups come by LISTEN/NOTIFY.
    bool session_bound() const noexcept {
        return postgres::session_bound(pool_mode) && !pooling_seen_.load();
    }
    /// Records a symptom of transaction pooling (a prepared statement missing
    /// or already there): from now on, every connection of this Locker takes
    /// the pooled path. Thread-safe.
    void note_transaction_pooling() const noexcept { pooling_seen_.store(true); }

    /// The host list's entry that served this Locker's last connection:
    /// with target_session_attrs, the server of the kind asked for that was
    /// found last. The next connection asks it first (with_host_first()):
    /// a host listed before it that does not answer, such as a frozen
    /// standby, then costs no connect_timeout per connection, which a
    /// renewal's budget could not afford. Thread-safe.
    void note_served_by(ServedHost entry) const;
    /// `conninfo` with that entry first.
    std::string served_first(const std::string& conninfo) const;

    PoolMode pool_mode;  // from the URL's `pooler` parameter
    DatabaseUrl url;     // url.original goes to libpq as it is (without `pooler`)
    std::string table;   // as given: "locks" or "ops.locks"
    /// Its names and those of the tables beside it, quoted as the
    /// statements spell them: family.table().quoted is "ops"."locks",
    /// family.index().quoted "ops"."locks_expires_idx" (for to_regclass()),
    /// family.guard().quoted "ops"."locks_guard" (the guard function),
    /// family.side(SideTable::runs).quoted "ops"."locks_runs".
    TableFamily family;
    std::string channel;   // LISTEN/NOTIFY channel of this table
    Redactor redact;       // scrubs the password out of messages
    duration timeout;      // longest wait for one answer of the server
    std::string conninfo;  // what libpq gets: the URL plus sqlock's time bounds

  private:
    mutable std::atomic<bool> pooling_seen_{false};
    mutable std::mutex served_by_mutex_;
    mutable std::optional<ServedHost> served_by_;
};

/// The notification channel for a table: "sqlock_" + the table name with '.'
/// replaced by '_', shortened with a hash suffix to fit 63 bytes. Two tables
/// may share a channel; that only costs a spurious wake-up (waiters re-check
/// the database), never a missed one.
std::string channel_name(const std::string& table);

}  // namespace sqlock::detail::postgres
