// The tables beside the lock table (`_runs`, `_pauses`, `_queue`,
// `_leaders`): init makes every one, the connection finds every one, the
// doctor reports every one, and each one missing is noticed by all three.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "contract/backend.hpp"         // internal: has() is asked directly
#include "loading/backend_factory.hpp"  // internal: a connection of the backend
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;

namespace {

struct Side {
    sqlock::detail::SideTable key;
    const char* suffix;
    const char* title;  // as the doctor names it
};

const std::vector<Side>& sides() {
    using sqlock::detail::SideTable;
    static const std::vector<Side> all = {{SideTable::runs, "_runs", "run history table"},
                                          {SideTable::pauses, "_pauses", "pauses table"},
                                          {SideTable::queue, "_queue", "queue table"},
                                          {SideTable::leaders, "_leaders", "leaders table"}};
    return all;
}

// The value of the doctor's fact `key`, or "(none)".
std::string fact(const sqlock::Diagnosis& d, const std::string& key) {
    for (const auto& f : d.facts)
        if (f.key == key) return f.value;
    return "(none)";
}

// The doctor's problems that name `name`.
std::vector<std::string> problems_naming(const sqlock::Diagnosis& d, const std::string& name) {
    std::vector<std::string> out;
    for (const auto& p : d.problems)
        if (p.find(name + " ") != std::string::npos) out.push_back(p);
    return out;
}

// Whether a new connection of the backend finds side table `side`.
bool found(const sqlock_test::Database& db, sqlock::detail::SideTable side) {
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    return backend->connect()->has(side);
}

}  // namespace

TEST_CASE("init makes every table beside the lock table, and the doctor reports each present",
          "[init][doctor]") {
    auto db = fresh_database();
    sqlock::Locker locker = db.open();
    CHECK(locker.init().empty());
    const sqlock::Diagnosis d = locker.diagnose();
    for (const Side& side : sides()) {
        const std::string name = db.table + side.suffix;
        INFO(name);
        CHECK(found(db, side.key));
        // Independent of the code under test: the table answers.
        CHECK(sqlock_test::query(db, "SELECT COUNT(*) FROM " + name).size() == 1);
        CHECK_THAT(fact(d, std::string(side.title) + " " + name),
                   Catch::Matchers::StartsWith("present"));
        CHECK(problems_naming(d, name).empty());
    }
}

TEST_CASE("a missing table beside the lock table is found missing, reported, and made by init",
          "[init][doctor][upgrade]") {
    const Side& side = GENERATE(from_range(sides()));
    auto db = fresh_database();
    const std::string name = db.table + side.suffix;
    const std::string key = std::string(side.title) + " " + name;
    INFO(key);
    // A lock table made before sqlock had this one.
    sqlock_test::exec_sql(db, "DROP TABLE " + name);
    CHECK_FALSE(found(db, side.key));

    sqlock::Locker locker = db.open();
    const sqlock::Diagnosis before = locker.diagnose();
    CHECK(fact(before, key) == "missing");
    const std::vector<std::string> problems = problems_naming(before, name);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Matchers::Contains(key + " does not exist") &&
                                Catch::Matchers::Contains("sqlock init"));
    // The others are as they were.
    for (const Side& other : sides())
        if (other.key != side.key)
            CHECK_THAT(fact(before, std::string(other.title) + " " + db.table + other.suffix),
                       Catch::Matchers::StartsWith("present"));

    // init's "is it all there?" check sees the gap and fills it.
    locker.init();
    CHECK(found(db, side.key));
    CHECK(sqlock_test::query(db, "SELECT COUNT(*) FROM " + name).size() == 1);
    const sqlock::Diagnosis after = db.open().diagnose();
    CHECK_THAT(fact(after, key), Catch::Matchers::StartsWith("present"));
    CHECK(problems_naming(after, name).empty());
}

TEST_CASE("a privilege missing on a table beside the lock table is named by init and the doctor",
          "[init][doctor][privileges][needs:server]") {
    const Side& side = GENERATE(from_range(sides()));
    auto db = fresh_database();
    const auto limited = sqlock_test::least_privileged(db);
    const std::string name = db.table + side.suffix;
    INFO(name);
    // Standard SQL, the same on every server.
    sqlock_test::exec_sql(db, "REVOKE DELETE ON " + name + " FROM sqlock_noaccess");
    sqlock::Locker locker(limited.url, sqlock_test::locker_options().table(db.table));

    const sqlock::Diagnosis d = locker.diagnose();
    CHECK_THAT(fact(d, std::string(side.title) + " " + name),
               Catch::Matchers::Contains("sqlock_noaccess") &&
                   Catch::Matchers::Contains("lacks privileges"));
    bool named = false;
    for (const auto& p : d.problems)
        named = named ||
                (p.find(side.title) != std::string::npos &&
                 p.find(side.suffix) != std::string::npos && p.find("DELETE") != std::string::npos);
    CHECK(named);
    for (const Side& other : sides())
        if (other.key != side.key)
            CHECK_THAT(fact(d, std::string(other.title) + " " + db.table + other.suffix),
                       Catch::Matchers::Contains("may use it"));

    // init's check of the role's access: a configuration error naming it.
    try {
        locker.init();
        FAIL("init called the table ready");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK_THAT(e.what(), Catch::Matchers::Contains(side.title) &&
                                 Catch::Matchers::Contains(side.suffix) &&
                                 Catch::Matchers::Contains("DELETE"));
    }
}

TEST_CASE("a table beside the lock table that this role may not even read is not called usable",
          "[doctor][privileges][needs:server]") {
    const Side& side = GENERATE(from_range(sides()));
    auto db = fresh_database();
    const auto limited = sqlock_test::least_privileged(db);
    const std::string name = db.table + side.suffix;
    INFO(name);
    sqlock_test::exec_sql(
        db, "REVOKE SELECT, INSERT, UPDATE, DELETE ON " + name + " FROM sqlock_noaccess");
    sqlock::Locker locker(limited.url, sqlock_test::locker_options().table(db.table));
    const sqlock::Diagnosis d = locker.diagnose();
    const std::string said = fact(d, std::string(side.title) + " " + name);
    INFO(said);
    CHECK_THAT(said, !Catch::Matchers::Contains("may use it"));
}
