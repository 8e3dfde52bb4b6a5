// Pausing jobs through the library (sqlock/pause.hpp), on every backend.
#include <catch2/catch.hpp>

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
