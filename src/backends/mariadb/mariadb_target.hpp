// MariaTarget — everything a MariaDB connection needs to know about its lock
// table, worked out once per Locker and shared (read-only) by its connections.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "contract/table_family.hpp"
#include "loading/url.hpp"
#include "mariadb_url.hpp"
#include "sqlock/duration.hpp"
#include "text.hpp"

namespace sqlock::detail::mariadb {

struct MariaTarget {
    /// `table` must be validated (validate_table_name with allow_schema).
    /// Throws errc::invalid_argument for a URL it cannot read.
    MariaTarget(const DatabaseUrl& url, std::string table, duration timeout);

    /// `text` with the password (as written and percent-decoded) replaced by
    /// "***", the URL by its redacted form, folded onto one line.
    std::string redact(const std::string& text) const;

    MariaUrl url;
    std::string original_url;  // may contain the password: never print it
    std::string redacted_url;  // safe to print
    std::string table;         // as given: "locks" or "ops.locks"
    /// Its names and those of the tables beside it, the fencing register
    /// among them, as given and quoted as the statements spell them:
    /// family.table().quoted is `ops`.`locks`, family.guard() the guard
    /// procedure ("ops.locks_guard", `ops`.`locks_guard`),
    /// family.side(SideTable::fencing) the fencing register
    /// ("ops.locks_fencing", `ops`.`locks_fencing`) and
    /// family.side(SideTable::runs).quoted `ops`.`locks_runs`.
    TableFamily family;
    /// Lower-cased "database.table", the part of every turn key (GET_LOCK
    /// names are server-wide; lower case because lower_case_table_names may
    /// make "Locks" and "locks" one table: sharing a turn only costs a wait).
    std::string turn_scope;
    duration timeout;  // longest wait for one answer of the server
    /// The function that takes a turn: GET_LOCK. A test hook,
    /// $SQLOCK_TEST_MARIADB_GET_LOCK, names another in its place (a stored
    /// function that fails as a server refusing GET_LOCK does).
    std::string get_lock = "GET_LOCK";

    /// Whether the server refused GET_LOCK (error 1235, as MariaDB
    /// releases with Galera do): the Locker's connections take turns as
    /// row locks from then on (mariadb_statements.hpp). Thread-safe.
    bool get_lock_refused() const noexcept { return get_lock_refused_.load(); }
    void refuse_get_lock() const noexcept { get_lock_refused_.store(true); }

    /// "GRANT SELECT, INSERT, UPDATE, DELETE ON `db`.`t` TO 'user'": what
    /// an administrator runs so that the URL's user may use the table.
    std::string grant_hint() const;

  private:
    text::MessageRedactor redactor_;
    mutable std::atomic<bool> get_lock_refused_{false};
};

/// `table` quoted with backticks, schema-qualified if it has a dot. Only for
/// validated names (letters, digits and underscores).
std::string quote_identifier_path(const std::string& table);

}  // namespace sqlock::detail::mariadb
