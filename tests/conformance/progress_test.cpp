// What a waiter learns: the progress hook, the holder carried by busy and
// timeout errors, rows kept by a minimum hold, holders that are gone, and
// times as time points.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("busy and timeout errors carry the holder as a LockInfo", "[progress]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto held = a.lock("job", lock_options().expires(1h));
    try {
        b.lock("job");
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        REQUIRE(e.holder() != nullptr);
        CHECK(e.holder()->id == held.id());
        CHECK(e.holder()->name == "job");
        CHECK(e.holder()->holder.pid == getpid());
        CHECK(e.holder()->holder.guid == held.owner_token());
        sqlock::error copy = e;  // the holder survives copies of the error
        REQUIRE(copy.holder() != nullptr);
        CHECK(copy.holder()->id == held.id());
    }
    auto slot = a.acquire_slot("pool", 1, lock_options().expires(1h));
    try {
        b.acquire_slot("pool", 1, lock_options().wait(200ms));
        FAIL("must time out");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::timeout);
        REQUIRE(e.holder() != nullptr);
        CHECK(e.holder()->name == "pool#1");
    }
    // Errors that are not about a holder carry none.
    try {
        b.lock("");
        FAIL("must be refused");
    } catch (const sqlock::error& e) {
        CHECK(e.holder() == nullptr);
    }
}

TEST_CASE("the progress hook sees the holder while waiting and can stop the wait", "[progress]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto held = a.lock("slow", lock_options().expires(1h));
    int calls = 0;
    std::int64_t seen_id = 0;
    sqlock::duration last_waited{};
    sqlock::LockOptions options;
    options.wait = 1h;  // only the hook ends this wait
    options.progress_every = 50ms;
    options.on_waiting = [&](const sqlock::LockInfo* holder, sqlock::duration waited) {
        ++calls;
        if (holder) seen_id = holder->id;
        CHECK(waited >= last_waited);
        last_waited = waited;
        return calls < 4;  // stop at the fourth call
    };
    const auto start = std::chrono::steady_clock::now();
    try {
        b.lock("slow", options);
        FAIL("the hook stops the wait");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::timeout);
        CHECK(std::string(e.what()).find("stopped waiting") != std::string::npos);
        REQUIRE(e.holder() != nullptr);
        CHECK(e.holder()->id == held.id());
    }
    // Called again and again while the wait goes on, until it said stop. (By
    // count, not time: under ASan on a loaded machine one attempt alone once
    // took longer than a time limit meant to allow six calls.)
    CHECK(calls == 4);
    CHECK(seen_id == held.id());
    // Generous: the wait ended long before its hour.
    CHECK(std::chrono::steady_clock::now() - start < 30s);

    SECTION("an exception from the hook leaves lock() unchanged") {
        struct stop {};
        options.on_waiting = [](const sqlock::LockInfo*, sqlock::duration) -> bool {
            throw stop{};
        };
        CHECK_THROWS_AS(b.lock("slow", options), stop);
        held.release();
        auto mine = b.lock("slow", options);  // free now: no wait, no hook
        CHECK(mine.held());
    }
    SECTION("progress_every must be positive") {
        options.progress_every = 0ms;
        try {
            b.lock("slow", options);
            FAIL("must be refused");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::invalid_argument);
        }
    }
}

TEST_CASE("a row kept by a minimum hold says that its job finished", "[progress]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    {
        auto job = a.lock("cron", lock_options().expires(1h).min_hold(10min));
        auto running = b.show("cron");
        REQUIRE(running);
        CHECK_FALSE(sqlock::kept_by_min_hold(*running));  // still running
        CHECK(running->holder.min_hold_ms == 600000);
        CHECK(running->holder.lease_ms == 3600000);
    }  // released: kept until created + 10 min
    auto kept = b.show("cron");
    REQUIRE(kept);
    CHECK(sqlock::kept_by_min_hold(*kept));
    try {
        b.lock("cron");
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("kept by the minimum hold of") != std::string::npos);
        CHECK(msg.find("whose job finished") != std::string::npos);
        CHECK(msg.find("is held by") == std::string::npos);
    }
    // Without a minimum hold nothing is claimed.
    auto plain = a.lock("plain", lock_options().expires(1h));
    CHECK_FALSE(sqlock::kept_by_min_hold(*b.show("plain")));
}

TEST_CASE("a holder on this host whose process is gone is shown as such", "[progress]") {
    auto db = fresh_database();
    // A child takes a lock, leaves it held and exits.
    auto codes = sqlock_test::run_children(1, [&](int) {
        auto locker = db.open();
        auto lock = locker.lock("orphan", lock_options().expires(1h));
        lock.detach();
        return 0;
    });
    REQUIRE(codes == std::vector<int>{0});
    auto locker = db.open();
    auto mine = locker.lock("alive", lock_options().expires(1h));
    auto orphan = locker.show("orphan");
    REQUIRE(orphan);
    CHECK(sqlock::holder_process_gone(*orphan));
    CHECK(sqlock::describe_holder(*orphan).find("process gone") != std::string::npos);
    auto alive = locker.show("alive");
    REQUIRE(alive);
    CHECK_FALSE(sqlock::holder_process_gone(*alive));
    CHECK(sqlock::describe_holder(*alive).find("process gone") == std::string::npos);
}

TEST_CASE("created and expires as system_clock time points", "[progress]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("timed", lock_options().expires(1h));
    auto info = locker.show("timed");
    REQUIRE(info);
    const auto now = std::chrono::system_clock::now();
    // The database's clock is this host's (SQLite) or a local server's:
    // generous bounds, minutes, not the milliseconds they agree to.
    CHECK(info->created_time() > now - 5min);
    CHECK(info->created_time() < now + 5min);
    CHECK(lock.created_time() == info->created_time());
    CHECK(lock.expires_time() == info->expires_time());
    const auto lease = info->expires_time() - info->created_time();
    CHECK(lease > 1h - 1s);
    CHECK(lease < 1h + 1s);
    sqlock::LockInfo foreign;
    foreign.created = "not a time";
    CHECK(foreign.created_time().time_since_epoch().count() == 0);
    foreign.expires = "1970-01-02 00:00:01.500";
    CHECK(foreign.expires_time().time_since_epoch() == 86401500ms);
}
