// sqlock::diagnose() on a direct connection: the facts of a healthy setup,
// and one problem line each for a read-only server and missing grants. A
// read-only server also fails acquisitions at once as a configuration error.
#include <catch2/catch.hpp>

#include "pg_test.hpp"
#include "test_support.hpp"

using sqlock_test::fresh_database;
using sqlock_test::locker_options;

namespace {

std::string fact(const sqlock::Diagnosis& d, const std::string& key) {
    for (const auto& f : d.facts)
        if (f.key == key) return f.value;
    return "";
}

}  // namespace

TEST_CASE("diagnose: a direct connection to a primary has no problem", "[pg][doctor]") {
    auto db = fresh_database();
    const sqlock::Diagnosis d = sqlock::diagnose(db.open());
    CHECK(d.problems.empty());
    CHECK(fact(d, "server role") == "primary (read-write)");
    CHECK(fact(d, "pooler detected") == "none, or session pooling");
    CHECK(fact(d, "wake-ups").rfind("pushed", 0) == 0);
    CHECK(fact(d, "sequential scans").rfind("avoided (sqlock sets", 0) == 0);
    CHECK(fact(d, "lock table " + db.table).find("may use it") != std::string::npos);
    CHECK_FALSE(pg_test::leaks_password(fact(d, "database")));
}

TEST_CASE("a read-only server is a configuration error at once, and one problem", "[pg][doctor]") {
    auto db = fresh_database();
    // What a standby looks like to a client, without a standby.
    const std::string url =
        pg_test::with_param(db.url, "options", "-c%20default_transaction_read_only%3Don");
    sqlock::Locker locker(url, locker_options().table(db.table));
    try {
        locker.try_lock("x");
        FAIL("a lock was taken on a read-only server");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK(e.backend_code() == "25006");
        CHECK(std::string(e.what()).find("target_session_attrs=read-write") != std::string::npos);
        CHECK_FALSE(pg_test::leaks_password(e.what()));
    }
    const sqlock::Diagnosis d = sqlock::diagnose(locker);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("read-only") != std::string::npos);
}

TEST_CASE("diagnose: a role without grants on the table is one problem", "[pg][doctor]") {
    auto db = fresh_database();
    sqlock::Locker locker(pg_test::with_user(db.url, "sqlock_noaccess"),
                          locker_options().table(db.table));
    const sqlock::Diagnosis d = sqlock::diagnose(locker);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("sqlock_noaccess lacks privileges") != std::string::npos);
    // One line for the tables beside it too: one GRANT fixes all three.
    CHECK(d.problems[0].find(db.table + "_pauses") != std::string::npos);
    CHECK(d.problems[0].find(db.table + "_runs") != std::string::npos);
    CHECK_FALSE(pg_test::leaks_password(d.problems[0]));
}

TEST_CASE("diagnose: a role with grants on the lock table but not its pauses table",
          "[pg][doctor]") {
    auto db = fresh_database();
    const auto limited = sqlock_test::least_privileged(db);
    sqlock_test::exec_sql(db, "REVOKE ALL ON " + db.table + "_pauses FROM sqlock_noaccess");
    sqlock::Locker locker(limited.url, locker_options().table(db.table));
    const sqlock::Diagnosis d = sqlock::diagnose(locker);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("sqlock_noaccess lacks privileges on pauses table " + db.table +
                             "_pauses") != std::string::npos);
    CHECK(fact(d, "pauses table " + db.table + "_pauses") ==
          "present; sqlock_noaccess lacks privileges");
    CHECK(fact(d, "run history table " + db.table + "_runs") ==
          "present; sqlock_noaccess may use it");
}

TEST_CASE("diagnose: one privilege missing on the lock table is a problem", "[pg][doctor]") {
    // has_table_privilege() with a list is true when any one is held: each
    // privilege must be asked for on its own.
    auto db = fresh_database();
    const auto limited = sqlock_test::least_privileged(db);
    sqlock_test::exec_sql(db, "REVOKE DELETE ON " + db.table + " FROM sqlock_noaccess");
    sqlock::Locker locker(limited.url, locker_options().table(db.table));
    const sqlock::Diagnosis d = sqlock::diagnose(locker);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("sqlock_noaccess lacks privileges on lock table " + db.table) !=
          std::string::npos);
    CHECK(fact(d, "lock table " + db.table) == "present; sqlock_noaccess lacks privileges");
}

TEST_CASE("diagnose: the defaults a session starts with, and what sqlock sets over them",
          "[pg][doctor]") {
    auto db = fresh_database();
    // A role or database default, as a session of the URL starts with it.
    const std::string url = pg_test::with_param(
        db.url, "options",
        "-c%20default_transaction_isolation%3Dserializable%20-c%20statement_timeout%3D1500");
    const sqlock::Diagnosis d =
        sqlock::diagnose(sqlock::Locker(url, locker_options().table(db.table)));
    CHECK(d.problems.empty());
    const std::string defaults = fact(d, "server defaults");
    CHECK(defaults.find("default_transaction_isolation = serializable") != std::string::npos);
    CHECK(defaults.find("statement_timeout = 1500ms") != std::string::npos);
    CHECK(defaults.find("default_transaction_read_only = off") != std::string::npos);
    const std::string sessions = fact(d, "sqlock's sessions");
    CHECK(sessions.rfind("set default_transaction_isolation = read committed (default "
                         "serializable)",
                         0) == 0);
    CHECK(sessions.find("lock_timeout = 0") != std::string::npos);
    CHECK(sessions.find("default_transaction_read_only = off (a read-only server is waited "
                        "through, never written)") != std::string::npos);
}
