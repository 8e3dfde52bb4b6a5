// Starting a run unless its job is paused (RunHistory::start_run_unless_paused),
// on every backend: the pause is read and the run recorded in one call.
#include <catch2/catch.hpp>
#include <string>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock::run_outcome;
using sqlock_test::fresh_database;
using sqlock_test::history_query;

TEST_CASE("a paused job records no run and gets the pause back", "[history][pause]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto admin = db.open();  // another "host" pauses it
    const sqlock::PauseInfo paused = sqlock::Pauses(admin).pause("job", 1h, "migration");
    auto lock = locker.lock("job");

    sqlock::RunStart info;
    info.program = "nightly";
    const sqlock::RunStartOutcome start =
        sqlock::RunHistory(locker).start_run_unless_paused(lock, info);
    CHECK_FALSE(start.run_id);
    REQUIRE(start.pause);
    CHECK(start.pause->name == "job");
    CHECK(start.pause->reason == "migration");
    CHECK(start.pause->paused_by == paused.paused_by);
    CHECK(start.pause->created == paused.created);
    REQUIRE(start.pause->until);
    CHECK(*start.pause->until == *paused.until);
    CHECK(sqlock::RunHistory(locker).runs().empty());

    // A pause of another name does not count; one without an end does.
    auto other = locker.lock("other-job");
    CHECK(sqlock::RunHistory(locker).start_run_unless_paused(other).run_id);
    sqlock::Pauses(admin).pause("job");
    const auto again = sqlock::RunHistory(locker).start_run_unless_paused(lock);
    CHECK_FALSE(again.run_id);
    REQUIRE(again.pause);
    CHECK_FALSE(again.pause->until);
    CHECK(sqlock::RunHistory(locker).runs(history_query().name("job")).empty());
}

TEST_CASE("a job that is not paused gets a run id, and the run is in the history",
          "[history][pause]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto admin = db.open();
    // A pause that has ended, and one of another name: neither is in force.
    sqlock::Pauses(admin).pause("job", 300ms);
    sqlock::Pauses(admin).pause("jobs");
    REQUIRE(sqlock_test::eventually([&] { return !sqlock::Pauses(admin).find("job"); }));
    auto lock = locker.lock("job");
    sqlock::RunStart info;
    info.program = "nightly";
    info.window_start_ms = 86400000;  // 1970-01-02 00:00:00.000
    const sqlock::RunStartOutcome start =
        sqlock::RunHistory(locker).start_run_unless_paused(lock, info);
    CHECK_FALSE(start.pause);
    REQUIRE(start.run_id);

    const auto runs = sqlock::RunHistory(admin).runs(history_query().name("job"));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].id == *start.run_id);
    CHECK(runs[0].name == "job");
    CHECK(runs[0].program == "nightly");
    CHECK(runs[0].fencing_id == lock.id());
    CHECK(runs[0].outcome == run_outcome::running);
    REQUIRE(runs[0].window_start);
    CHECK(*runs[0].window_start == "1970-01-02 00:00:00.000");
    CHECK(sqlock::RunHistory(locker).finish_run(lock, *start.run_id, {}) == run_outcome::succeeded);
    CHECK(sqlock::RunHistory(admin).runs(history_query().name("job"))[0].outcome ==
          run_outcome::succeeded);

    // Resumed: runs again.
    sqlock::Pauses(admin).resume("jobs");
    auto next = locker.lock("jobs");
    CHECK(sqlock::RunHistory(locker).start_run_unless_paused(next).run_id);
}

TEST_CASE("a pause ending while a run starts gives the pause or a run, never neither",
          "[history][pause][expiry]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("job");
    // Starts, back to back, across the end of short pauses: one of them
    // straddles the moment the pause ends.
    int paused = 0, started = 0;
    for (int round = 0; round < 20; ++round) {
        sqlock::Pauses(locker).pause("job", 20ms);
        for (;;) {
            const sqlock::RunStartOutcome start =
                sqlock::RunHistory(locker).start_run_unless_paused(lock);
            REQUIRE(start.run_id.has_value() != start.pause.has_value());
            if (start.run_id) {
                ++started;
                break;
            }
            CHECK(start.pause->name == "job");
            ++paused;
        }
    }
    CHECK(started == 20);
    CHECK(paused > 0);
}

TEST_CASE(
    "without a pauses table nothing is paused; without a history table it is "
    "a configuration error",
    "[history][pause][upgrade]") {
    auto db = fresh_database();
    db.open().init();
    sqlock_test::exec_sql(db, "DROP TABLE " + db.table + "_pauses");
    {
        auto locker = db.open();
        auto lock = locker.lock("job");
        const auto start = sqlock::RunHistory(locker).start_run_unless_paused(lock);
        CHECK_FALSE(start.pause);
        REQUIRE(start.run_id);
        CHECK(sqlock::RunHistory(locker).runs()[0].id == *start.run_id);
    }
    sqlock_test::exec_sql(db, "DROP TABLE " + db.table + "_runs");
    auto locker = db.open();
    auto lock = locker.lock("job2");
    try {
        sqlock::RunHistory(locker).start_run_unless_paused(lock);
        FAIL("a run recorded without a history table");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK_THAT(e.what(), Catch::Matchers::Contains("sqlock init"));
    }
    locker.init();
    CHECK(sqlock::RunHistory(locker).start_run_unless_paused(lock).run_id);
}

TEST_CASE("start_run_unless_paused refuses a released lock or one from another Locker",
          "[history][pause][validation]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto other = db.open();
    auto lock = locker.lock("job");
    auto invalid = [&](sqlock::Locker& l, const sqlock::Lock& k) {
        try {
            sqlock::RunHistory(l).start_run_unless_paused(k);
        } catch (const sqlock::error& e) {
            return e.category() == sqlock::errc::invalid_argument;
        }
        return false;
    };
    CHECK(invalid(other, lock));
    lock.release();
    CHECK(invalid(locker, lock));
    CHECK(sqlock::RunHistory(locker).runs().empty());
}
