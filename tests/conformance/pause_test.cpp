// Pausing jobs through the library (sqlock/pauses.hpp), on every backend.
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;

namespace {

bool invalid(const std::function<void()>& f) {
    try {
        f();
    } catch (const sqlock::error& e) {
        return e.category() == sqlock::errc::invalid_argument;
    }
    return false;
}

}  // namespace

TEST_CASE("a pause is stored, read back, replaced and resumed", "[pause]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();  // another "host": it sees the same pause
    CHECK_FALSE(sqlock::Pauses(locker).find("job"));
    CHECK(sqlock::Pauses(locker).all().empty());

    auto p = sqlock::Pauses(locker).pause("job", std::nullopt, "migration");
    CHECK(p.name == "job");
    CHECK(p.reason == "migration");
    CHECK(p.paused_by.find('@') != std::string::npos);
    CHECK_FALSE(p.until);
    auto seen = sqlock::Pauses(other).find("job");
    REQUIRE(seen);
    CHECK(seen->paused_by == p.paused_by);
    CHECK(seen->created == p.created);
    CHECK_FALSE(sqlock::Pauses(other).find("job2"));

    // Pausing again replaces it.
    auto q = sqlock::Pauses(locker).pause("job", 1h, "");
    REQUIRE(q.until);
    CHECK(sqlock_test::seconds_between(q.created, *q.until) == Approx(3600.0).margin(0.01));
    CHECK(sqlock::Pauses(other).find("job")->reason.empty());
    sqlock::Pauses(locker).pause("another");
    auto all = sqlock::Pauses(other).all();
    REQUIRE(all.size() == 2);
    CHECK(all[0].name == "another");
    CHECK(all[1].name == "job");

    CHECK(sqlock::Pauses(other).resume("job"));
    CHECK_FALSE(sqlock::Pauses(locker).find("job"));
    CHECK_FALSE(sqlock::Pauses(locker).resume("job"));  // not paused any more
    CHECK(sqlock::Pauses(locker).all().size() == 1);
}

TEST_CASE("a pause does not touch a held lock", "[pause]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    sqlock::Pauses(locker).pause("job");
    CHECK(lock.active());
    auto row = locker.show("job");
    REQUIRE(row);
    CHECK_FALSE(row->expired());
    lock.release();
}

TEST_CASE("a pause with a duration ends by itself, on the database's clock", "[pause][expiry]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto p = sqlock::Pauses(locker).pause("job", 400ms, "short");
    REQUIRE(p.until);
    CHECK(sqlock_test::seconds_between(p.created, *p.until) == Approx(0.4).margin(0.002));
    CHECK(sqlock_test::eventually([&] { return !sqlock::Pauses(locker).find("job"); }));
    CHECK(sqlock::Pauses(locker).all().empty());
    // An expired pause is deleted by resume, but it was not in force.
    CHECK_FALSE(sqlock::Pauses(locker).resume("job"));
}

namespace {

// The names in the pauses table, ended or not, read past the library.
std::vector<std::string> pause_rows(const sqlock_test::Database& db) {
    std::vector<std::string> names;
    for (const auto& row :
         sqlock_test::query(db, "SELECT name FROM " + db.table + "_pauses ORDER BY name"))
        names.push_back(row.at(0).value_or("NULL"));
    return names;
}

}  // namespace

TEST_CASE("the reaper deletes the pauses that have ended, and only those", "[pause][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::Pauses(locker).pause("long", 1h);
    sqlock::Pauses(locker).pause("forever");
    CHECK(sqlock::Pauses(locker).count_expired() == 0);
    CHECK(sqlock::Pauses(locker).purge_expired() == 0);
    // Then one that ends soon (whether it has ended already when the next
    // statement runs is the machine's business: no check before it has).
    sqlock::Pauses(locker).pause("short", 300ms);
    REQUIRE(sqlock_test::eventually([&] { return sqlock::Pauses(locker).count_expired() == 1; }));
    CHECK_FALSE(sqlock::Pauses(locker).find("short"));
    // Counting deletes nothing: the ended row is still there.
    CHECK(pause_rows(db) == std::vector<std::string>{"forever", "long", "short"});
    CHECK(sqlock::Pauses(locker).purge_expired() == 1);
    CHECK(pause_rows(db) == std::vector<std::string>{"forever", "long"});
    CHECK(sqlock::Pauses(locker).count_expired() == 0);
    CHECK(sqlock::Pauses(locker).purge_expired() == 0);
    CHECK(sqlock::Pauses(locker).find("long"));
    CHECK(sqlock::Pauses(locker).find("forever"));
}

TEST_CASE("ended pauses are deleted in batches, by any number of reapers at once",
          "[pause][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    for (int i = 0; i < 7; ++i) sqlock::Pauses(locker).pause("job" + std::to_string(i), 200ms);
    sqlock::Pauses(locker).pause("kept", 1h);
    REQUIRE(sqlock_test::eventually([&] { return sqlock::Pauses(locker).count_expired() == 7; }));
    // Two reapers (two Lockers, as on two hosts), batches of 2: between them
    // they delete each ended pause once.
    auto other = db.open();
    std::size_t by_other = 0;
    std::thread second([&] { by_other = sqlock::Pauses(other).purge_expired(2); });
    const std::size_t by_first = sqlock::Pauses(locker).purge_expired(2);
    second.join();
    CHECK(by_first + by_other == 7);
    CHECK(pause_rows(db) == std::vector<std::string>{"kept"});
    CHECK_THROWS_AS(sqlock::Pauses(locker).purge_expired(0), sqlock::error);
}

TEST_CASE("a pause renewed after it ended is not reaped", "[pause][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    sqlock::Pauses(locker).pause("job", 200ms);
    REQUIRE(sqlock_test::eventually([&] { return sqlock::Pauses(locker).count_expired() == 1; }));
    sqlock::Pauses(locker).pause("job", 1h, "again");  // replaces the ended one
    CHECK(sqlock::Pauses(locker).count_expired() == 0);
    CHECK(sqlock::Pauses(locker).purge_expired() == 0);
    CHECK(sqlock::Pauses(locker).find("job"));
}

TEST_CASE("pause arguments are checked", "[pause][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(invalid([&] { sqlock::Pauses(locker).pause(""); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).pause("bad\xffname"); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).pause("job", 0ms); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).pause("job", -1s); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).pause("job", 400 * 24h); }));
    CHECK(invalid(
        [&] { sqlock::Pauses(locker).pause("job", std::nullopt, std::string(1025, 'x')); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).pause("job", std::nullopt, "\xff\xfe"); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).resume(""); }));
    CHECK(invalid([&] { sqlock::Pauses(locker).find(""); }));
    CHECK(sqlock::Pauses(locker).all().empty());
}

TEST_CASE("a lock table without its pauses table: nothing is paused until init adds it",
          "[pause][upgrade]") {
    auto db = fresh_database();
    {
        auto locker = db.open();
        locker.init();
    }
    sqlock_test::exec_sql(db, "DROP TABLE " + db.table + "_pauses");
    auto locker = db.open();
    CHECK_FALSE(sqlock::Pauses(locker).find("job"));
    CHECK(sqlock::Pauses(locker).all().empty());
    // The reaper keeps working: there is simply nothing to delete.
    CHECK(sqlock::Pauses(locker).count_expired() == 0);
    CHECK(sqlock::Pauses(locker).purge_expired() == 0);
    try {
        sqlock::Pauses(locker).pause("job");
        FAIL("pause without a pauses table");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("sqlock init"));
    }
    locker.init();
    sqlock::Pauses(locker).pause("job");
    CHECK(sqlock::Pauses(locker).find("job"));
}
