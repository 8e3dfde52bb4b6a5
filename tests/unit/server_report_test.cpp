// The core doctor's words (src/contract/server_report.hpp), from the facts a
// server backend reads: what the report says of the database, the lock table,
// the tables beside it and this user's access. The servers' own suites see
// the same through their real catalogs (conformance/side_tables_test.cpp).
#include "contract/server_report.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace {

using sqlock::Diagnosis;
using namespace sqlock::detail;

std::string fact(const Diagnosis& d, const std::string& key) {
    for (const auto& f : d.facts)
        if (f.key == key) return f.value;
    return "(none)";
}

ServerFacts facts_of_a_usable_server() {
    ServerFacts s;
    s.lookups.fact = "none by sqlock";
    s.version = "15.4";
    s.role = "primary (read-write)";
    s.user = "app";
    s.table = "ops.locks";
    s.table_exists = true;
    for (SideTable side : common_side_tables)
        s.sides.push_back({side, side_table_name(s.table, side), true, true, {}});
    return s;
}

const AccessWording wording{"role", "CREATE on the schema",
                            [](std::size_t tables, bool serial_ids) {
                                return "GRANT ON " + std::to_string(tables) +
                                       (serial_ids ? " with sequences" : "");
                            },
                            ", then grant it"};

struct Report {
    Diagnosis d;
    std::vector<std::string> problems;
};

Report report(const ServerFacts& s) {
    Report r;
    auto problem = [&](std::string line) { r.problems.push_back(std::move(line)); };
    report_server(s, r.d, problem);
    report_tables(s, wording, r.d, problem);
    return r;
}

}  // namespace

TEST_CASE("the core doctor: a usable server and its tables have no problem", "[doctor]") {
    const Report r = report(facts_of_a_usable_server());
    CHECK(r.problems.empty());
    CHECK(fact(r.d, "server version") == "15.4");
    CHECK(fact(r.d, "server role") == "primary (read-write)");
    CHECK(fact(r.d, "clock difference").rfind("+0.0 ms", 0) == 0);
    CHECK(fact(r.d, "lock table ops.locks") == "present; app may use it");
    CHECK(fact(r.d, "leaders table ops.locks_leaders") == "present; app may use it");
    // In order: the server's facts, then the tables'.
    REQUIRE(r.d.facts.size() == 4 + 1 + common_side_tables.size());
    CHECK(r.d.facts[0].key == "host name lookup");
    CHECK(r.d.facts[4].key == "lock table ops.locks");
}

TEST_CASE("the core doctor names every table this user may not use on one line", "[doctor]") {
    ServerFacts s = facts_of_a_usable_server();
    SECTION("without the privileges named: the tables only") {
        s.table_usable = false;
        s.sides[1].usable = false;  // the pauses (no sequence)
        const Report r = report(s);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0] ==
              "role app lacks privileges on lock table ops.locks and pauses table "
              "ops.locks_pauses: GRANT ON 2 with sequences");
        CHECK(fact(r.d, "lock table ops.locks") == "present; app lacks privileges");
        CHECK(fact(r.d, "pauses table ops.locks_pauses") == "present; app lacks privileges");
        CHECK(fact(r.d, "run history table ops.locks_runs") == "present; app may use it");
    }
    SECTION("with them: each table's") {
        s.sides[1].usable = false;
        s.sides[1].lacking = {"UPDATE", "DELETE"};
        s.sides[3].usable = false;  // not probed: no privilege named
        const Report r = report(s);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0] ==
              "role app lacks UPDATE, DELETE on pauses table ops.locks_pauses and privileges on "
              "leaders table ops.locks_leaders: GRANT ON 2");
        CHECK(fact(r.d, "lock table ops.locks") == "present; app may use it");
    }
}

TEST_CASE("the core doctor: a missing lock table covers the tables beside it", "[doctor]") {
    ServerFacts s = facts_of_a_usable_server();
    s.table_exists = false;
    s.table_usable = false;
    for (SideTableFacts& side : s.sides) side.exists = false;
    const Report r = report(s);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0] ==
          "lock table ops.locks does not exist: run `sqlock init` (needs CREATE on the schema)");
    CHECK(fact(r.d, "lock table ops.locks") == "missing");
    CHECK(fact(r.d, "queue table ops.locks_queue") == "missing");
}

TEST_CASE("the core doctor: a missing side table, a read-only server, a far clock, a lookup",
          "[doctor]") {
    ServerFacts s = facts_of_a_usable_server();
    s.sides[2].exists = false;  // the queue
    s.read_only_problem = "the server is read-only";
    s.clock.difference_ms = 5000;
    s.lookups.problems = {"db.example: did not resolve"};
    const Report r = report(s);
    REQUIRE(r.problems.size() == 4);
    CHECK(r.problems[0] == "db.example: did not resolve");
    CHECK(r.problems[1] == "the server is read-only");
    CHECK(r.problems[2].rfind("this host's clock is 5.0 s behind the database's", 0) == 0);
    CHECK(r.problems[3].rfind("queue table ops.locks_queue does not exist (lock table ops.locks "
                              "predates it): ",
                              0) == 0);
    CHECK(r.problems[3].find("; run `sqlock init` (needs CREATE on the schema), then grant it") !=
          std::string::npos);
}
