// The table family (src/contract/table_family.hpp): the names of the tables
// beside a lock table, and every built backend's schema file filled in by
// it, each side table created, no name left unfilled.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "built_targets.hpp"
#include "contract/table_family.hpp"

using sqlock::detail::side_table_name;
using sqlock::detail::SideTable;

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
    std::vector<unit_test::FilledSchema> schemas;
    for (const unit_test::BuiltBackend& backend : unit_test::built_backends())
        for (unit_test::FilledSchema& f : backend.schemas()) schemas.push_back(std::move(f));
    REQUIRE_FALSE(schemas.empty());
    for (const unit_test::FilledSchema& f : schemas) {
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
