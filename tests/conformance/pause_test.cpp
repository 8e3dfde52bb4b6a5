// Pausing jobs through the library (sqlock/pause.hpp), on every backend.
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
    CHECK_FALSE(locker.paused("job"));
    CHECK(locker.pauses().empty());

    auto p = locker.pause("job", std::nullopt, "migration");
    CHECK(p.name == "job");
    CHECK(p.reason == "migration");
    CHECK(p.paused_by.find('@') != std::string::npos);
    CHECK_FALSE(p.until);
    auto seen = other.paused("job");
    REQUIRE(seen);
    CHECK(seen->paused_by == p.paused_by);
    CHECK(seen->created == p.created);
    CHECK_FALSE(other.paused("job2"));

    // Pausing again replaces it.
    auto q = locker.pause("job", 1h, "");
    REQUIRE(q.until);
    CHECK(sqlock_test::seconds_between(q.created, *q.until) == Approx(3600.0).margin(0.01));
    CHECK(other.paused("job")->reason.empty());
    locker.pause("another");
    auto all = other.pauses();
    REQUIRE(all.size() == 2);
    CHECK(all[0].name == "another");
    CHECK(all[1].name == "job");

    CHECK(other.resume("job"));
    CHECK_FALSE(locker.paused("job"));
    CHECK_FALSE(locker.resume("job"));  // not paused any more
    CHECK(locker.pauses().size() == 1);
}

TEST_CASE("a pause does not touch a held lock", "[pause]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    locker.pause("job");
    CHECK(lock.active());
    auto row = locker.show("job");
    REQUIRE(row);
    CHECK_FALSE(row->expired());
    lock.release();
}

TEST_CASE("a pause with a duration ends by itself, on the database's clock", "[pause][expiry]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto p = locker.pause("job", 400ms, "short");
    REQUIRE(p.until);
    CHECK(sqlock_test::seconds_between(p.created, *p.until) == Approx(0.4).margin(0.002));
    CHECK(sqlock_test::eventually([&] { return !locker.paused("job"); }));
    CHECK(locker.pauses().empty());
    // An expired pause is deleted by resume, but it was not in force.
    CHECK_FALSE(locker.resume("job"));
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
    locker.pause("long", 1h);
    locker.pause("forever");
    CHECK(locker.count_expired_pauses() == 0);
    CHECK(locker.purge_expired_pauses() == 0);
    // Then one that ends soon (whether it has ended already when the next
    // statement runs is the machine's business: no check before it has).
    locker.pause("short", 300ms);
    REQUIRE(sqlock_test::eventually([&] { return locker.count_expired_pauses() == 1; }));
    CHECK_FALSE(locker.paused("short"));
    // Counting deletes nothing: the ended row is still there.
    CHECK(pause_rows(db) == std::vector<std::string>{"forever", "long", "short"});
    CHECK(locker.purge_expired_pauses() == 1);
    CHECK(pause_rows(db) == std::vector<std::string>{"forever", "long"});
    CHECK(locker.count_expired_pauses() == 0);
    CHECK(locker.purge_expired_pauses() == 0);
    CHECK(locker.paused("long"));
    CHECK(locker.paused("forever"));
}

TEST_CASE("ended pauses are deleted in batches, by any number of reapers at once",
          "[pause][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    for (int i = 0; i < 7; ++i) locker.pause("job" + std::to_string(i), 200ms);
    locker.pause("kept", 1h);
    REQUIRE(sqlock_test::eventually([&] { return locker.count_expired_pauses() == 7; }));
    // Two reapers (two Lockers, as on two hosts), batches of 2: between them
    // they delete each ended pause once.
    auto other = db.open();
    std::size_t by_other = 0;
    std::thread second([&] { by_other = other.purge_expired_pauses(2); });
    const std::size_t by_first = locker.purge_expired_pauses(2);
    second.join();
    CHECK(by_first + by_other == 7);
    CHECK(pause_rows(db) == std::vector<std::string>{"kept"});
    CHECK_THROWS_AS(locker.purge_expired_pauses(0), sqlock::error);
}

TEST_CASE("a pause renewed after it ended is not reaped", "[pause][reap]") {
    auto db = fresh_database();
    auto locker = db.open();
    locker.pause("job", 200ms);
    REQUIRE(sqlock_test::eventually([&] { return locker.count_expired_pauses() == 1; }));
    locker.pause("job", 1h, "again");  // replaces the ended one
    CHECK(locker.count_expired_pauses() == 0);
    CHECK(locker.purge_expired_pauses() == 0);
    CHECK(locker.paused("job"));
}

TEST_CASE("pause arguments are checked", "[pause][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(invalid([&] { locker.pause(""); }));
    CHECK(invalid([&] { locker.pause("bad\xffname"); }));
    CHECK(invalid([&] { locker.pause("job", 0ms); }));
    CHECK(invalid([&] { locker.pause("job", -1s); }));
    CHECK(invalid([&] { locker.pause("job", 400 * 24h); }));
    CHECK(invalid([&] { locker.pause("job", std::nullopt, std::string(1025, 'x')); }));
    CHECK(invalid([&] { locker.pause("job", std::nullopt, "\xff\xfe"); }));
    CHECK(invalid([&] { locker.resume(""); }));
    CHECK(invalid([&] { locker.paused(""); }));
    CHECK(locker.pauses().empty());
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
    CHECK_FALSE(locker.paused("job"));
    CHECK(locker.pauses().empty());
    // The reaper keeps working: there is simply nothing to delete.
    CHECK(locker.count_expired_pauses() == 0);
    CHECK(locker.purge_expired_pauses() == 0);
    try {
        locker.pause("job");
        FAIL("pause without a pauses table");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("sqlock init"));
    }
    locker.init();
    locker.pause("job");
    CHECK(locker.paused("job"));
}
