// The built backends' targets, for the unit tests of what each backend
// sends (statement_sets_test.cpp) and what its schema file creates
// (table_family_test.cpp): a lock table's names as each backend's own code
// reads them from a URL, without a server. The table is "ops.locks" where
// the backend has schemas, so that every name carries its schema; "locks"
// on SQLite, which has none.
//
// One maker per backend, under its SQLOCK_WITH_<NAME>, and built_backends()
// listing what the tests of every backend read from each: this file is the
// one place that says which backends there are.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "contract/statement_set.hpp"
#include "contract/table_family.hpp"
#include "loading/url.hpp"
#include "sqlock/config.hpp"
#if SQLOCK_WITH_SQLITE
#include "sqlite_statements.hpp"
#endif
#if SQLOCK_WITH_POSTGRES
#include "postgres_statements.hpp"
#include "postgres_target.hpp"
#endif
#if SQLOCK_WITH_MARIADB
#include "mariadb_statements.hpp"
#include "mariadb_target.hpp"
#endif

namespace unit_test {

#if SQLOCK_WITH_SQLITE
inline sqlock::detail::sqlite::Tables sqlite_target(const std::string& table = "locks") {
    return sqlock::detail::sqlite::Tables(table);
}
#endif

#if SQLOCK_WITH_POSTGRES
inline sqlock::detail::postgres::PgTarget postgres_target(const std::string& table = "ops.locks") {
    return sqlock::detail::postgres::PgTarget(
        sqlock::detail::parse_database_url("postgresql://u@127.0.0.1:5432/db"), table,
        std::chrono::seconds(10));
}
#endif

#if SQLOCK_WITH_MARIADB
inline sqlock::detail::mariadb::MariaTarget mariadb_target(const std::string& table = "ops.locks") {
    return sqlock::detail::mariadb::MariaTarget(
        sqlock::detail::parse_database_url("mariadb://u@127.0.0.1:3306/db"), table,
        std::chrono::seconds(10));
}
#endif

/// A backend's schema file filled in for its target, and the names of the
/// tables it should create.
struct FilledSchema {
    std::string dialect;  // "MariaDB with Galera"
    std::string sql;
    sqlock::detail::TableFamily family;
};

/// One built backend as the tests of every backend's statements and schema
/// see it, each made for its target above when called.
struct BuiltBackend {
    std::string dialect;  // "PostgreSQL"
    char sigil;           // of its placeholders: ?N or $N
    std::function<sqlock::detail::StatementSet()> statement_set;
    /// Its schema file, once per kind of server where it differs (MariaDB's
    /// for a Galera cluster).
    std::function<std::vector<FilledSchema>()> schemas;
};

/// Every built backend, in the order of SQLOCK_BACKENDS.
inline std::vector<BuiltBackend> built_backends() {
    std::vector<BuiltBackend> out;
#if SQLOCK_WITH_SQLITE
    out.push_back(
        {"SQLite", '?', [] { return sqlock::detail::sqlite::statement_set(sqlite_target()); },
         [] {
             const auto tables = sqlite_target();
             return std::vector<FilledSchema>{
                 {"SQLite", sqlock::detail::sqlite::schema_script(tables), tables.family}};
         }});
#endif
#if SQLOCK_WITH_POSTGRES
    out.push_back(
        {"PostgreSQL", '$',
         [] { return sqlock::detail::postgres::statement_set(postgres_target()); },
         [] {
             const auto target = postgres_target();
             return std::vector<FilledSchema>{
                 {"PostgreSQL", sqlock::detail::postgres::schema_script(target), target.family}};
         }});
#endif
#if SQLOCK_WITH_MARIADB
    out.push_back({"MariaDB", '?',
                   [] { return sqlock::detail::mariadb::sql::statement_set(mariadb_target()); },
                   [] {
                       const auto target = mariadb_target();
                       std::vector<FilledSchema> schemas;
                       for (bool wsrep : {false, true})
                           schemas.push_back({wsrep ? "MariaDB with Galera" : "MariaDB",
                                              sqlock::detail::mariadb::sql::schema_script(
                                                  target, "utf8mb4_nopad_bin", wsrep),
                                              target.family});
                       return schemas;
                   }});
#endif
    return out;
}

}  // namespace unit_test
