// The databases a run measures: SQLite files in the run's scratch directory,
// the PostgreSQL server named by --pg-url and the MariaDB/MySQL server named
// by --mariadb-url.
#pragma once

#include <string>

namespace sqlock_bench {

enum class backend_kind { sqlite, postgresql, mariadb };

/// BackendTarget
///
/// One backend of this run and whether it can be measured. For PostgreSQL
/// and MariaDB `location` is the URL with its password: print `shown` instead.
struct BackendTarget {
    backend_kind kind = backend_kind::sqlite;
    std::string name;         // "sqlite", "postgresql" or "mariadb", as in the results
    std::string location;     // SQLite: the scratch directory; servers: the URL (secret)
    std::string shown;        // what may be printed: the directory, or the redacted URL
    std::string skip_reason;  // non-empty: not measured in this run, and why

    bool usable() const { return skip_reason.empty(); }
};

/// The URL with any password (in the user info or a password= parameter)
/// replaced by "***".
std::string redact_url(const std::string& url);

/// Replaces every occurrence of the URL's password in `text` by "***": for
/// error messages of the database client libraries.
std::string scrub_password(const std::string& text, const std::string& url);

}  // namespace sqlock_bench
