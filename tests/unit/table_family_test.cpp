// The table family (src/contract/table_family.hpp): the names of the tables
// beside a lock table, and every built backend's schema file filled in by
// it, each side table created, no name left unfilled.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

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

using sqlock::detail::side_table_name;
using sqlock::detail::SideTable;

namespace {

struct Filled {
    std::string dialect;
    std::string sql;                     // the schema script of lock table "ops.locks"
    sqlock::detail::TableFamily family;  // its names
};

std::vector<Filled> built_schemas() {
    using namespace std::chrono_literals;
    std::vector<Filled> out;
#if SQLOCK_WITH_SQLITE
    {
        const sqlock::detail::sqlite::Tables tables("locks");
        out.push_back({"SQLite", sqlock::detail::sqlite::schema_script(tables), tables.family});
    }
#endif
#if SQLOCK_WITH_POSTGRES
    {
        const sqlock::detail::postgres::PgTarget target(
            sqlock::detail::parse_database_url("postgresql://u@127.0.0.1:5432/db"), "ops.locks",
            10s);
        out.push_back(
            {"PostgreSQL", sqlock::detail::postgres::schema_script(target), target.family});
    }
#endif
#if SQLOCK_WITH_MARIADB
    for (bool wsrep : {false, true}) {
        const sqlock::detail::mariadb::MariaTarget target(
            sqlock::detail::parse_database_url("mariadb://u@127.0.0.1:3306/db"), "ops.locks", 10s);
        out.push_back(
            {wsrep ? "MariaDB with Galera" : "MariaDB",
             sqlock::detail::mariadb::sql::schema_script(target, "utf8mb4_nopad_bin", wsrep),
             target.family});
    }
#endif
    return out;
}

}  // namespace

TEST_CASE("a side table is named beside its lock table, in its schema, fitted to 63 bytes",
          "[schema]") {
    CHECK(side_table_name("locks", SideTable::runs) == "locks_runs");
    CHECK(side_table_name("ops.locks", SideTable::leaders) == "ops.locks_leaders");
    const std::string a(70, 'a'), b = std::string(69, 'a') + "b";
    for (SideTable side : sqlock::detail::common_side_tables) {
        const std::string long_a = side_table_name("ops." + a, side);
        const std::string long_b = side_table_name("ops." + b, side);
        CHECK(long_a.rfind("ops.", 0) == 0);
        CHECK(long_a.size() - 4 <= 63);
        CHECK(long_a != long_b);
        CHECK(long_a == side_table_name("ops." + a, side));  // deterministic
    }
}

TEST_CASE("every built schema file creates each table of its family, every name filled in",
          "[schema]") {
    const std::vector<Filled> schemas = built_schemas();
    REQUIRE_FALSE(schemas.empty());
    for (const Filled& f : schemas) {
        INFO(f.dialect);
        CHECK(f.sql.find("${") == std::string::npos);
        CHECK(f.sql.find(f.family.table().quoted) != std::string::npos);
        for (SideTable side : f.family.sides()) {
            INFO(sqlock::detail::kind_of(side).title);
            CHECK(f.sql.find("CREATE TABLE IF NOT EXISTS " + f.family.side(side).quoted) !=
                  std::string::npos);
        }
    }
}
