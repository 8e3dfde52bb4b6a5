// Fencing for library users: a Lock with a heartbeat whose
// renewals cannot get through warns (on_expiring) before its row expires by
// the database's clock, and declares the lock lost once valid_until() has
// passed. An embedded backend: another connection holds the write lock (its
// hold_write_lock hook). A server: the lock's Locker reaches it through a
// frozen fault_relay.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "cut_off.hpp"
#include "relay.hpp"
#include "reliability_support.hpp"
#include "server_url.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

using steady = std::chrono::steady_clock;
using wall = std::chrono::system_clock;

std::int64_t wall_ms(wall::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

struct Seen {
    std::atomic<bool> warned{false};
    std::atomic<std::int64_t> warned_wall_ms{0};
    std::atomic<std::int64_t> warned_steady{0};
    std::atomic<std::int64_t> valid_until{0};
    std::atomic<bool> lost{false};
};

sqlock::LockOptions watched(Seen& seen) {
    sqlock::LockOptions o;
    o.expires = 3s;
    o.heartbeat = true;
    o.warn_before = 1s;
    o.on_expiring = [&seen](const std::string&, std::int64_t, steady::time_point until) {
        seen.warned_wall_ms = wall_ms(wall::now());
        seen.warned_steady = steady::now().time_since_epoch().count();
        seen.valid_until = until.time_since_epoch().count();
        seen.warned = true;
    };
    o.on_lost = [&seen](const std::string&, std::int64_t) { seen.lost = true; };
    return o;
}

// The row's expiry by the database's clock, in ms since the epoch.
std::int64_t expires_ms(const sqlock_test::Database& db, const std::string& name) {
    const auto epoch_ms_sql = sqlock_test::backend_context().hooks.epoch_ms_sql;
    REQUIRE(epoch_ms_sql);  // the test declares [needs:epoch_ms_sql]
    const std::string sql = "SELECT " + epoch_ms_sql("expires") + " FROM " + db.table +
                            " WHERE lockstring = '" + name + "'";
    auto rows = reliability::query(db, sql);
    REQUIRE(rows.size() == 1);
    return std::stoll(rows[0].at(0).value());
}

void check_warning(const sqlock_test::Database& db, sqlock::Lock& lock, Seen& seen) {
    REQUIRE(eventually([&] { return seen.warned.load(); }, 10s));
    // Ahead of valid_until by warn_before, and before the row expires by
    // the database's clock (same host: the wall clocks are the same).
    CHECK(seen.warned_steady.load() < seen.valid_until.load());
    CHECK(lock.valid_until().time_since_epoch().count() == seen.valid_until.load());
    const std::int64_t row_expires = expires_ms(db, lock.lockstring());
    INFO("warned at " << seen.warned_wall_ms.load() << " ms, row expires at " << row_expires);
    CHECK(seen.warned_wall_ms.load() < row_expires);
    CHECK(row_expires - seen.warned_wall_ms.load() >= 500);  // most of warn_before left
    CHECK_FALSE(seen.lost.load());
    // Then lost, at valid_until, with no answer from the database.
    REQUIRE(eventually([&] { return seen.lost.load(); }, 10s));
    CHECK(steady::now() >= lock.valid_until());
}

}  // namespace

TEST_CASE("library: on_expiring fires before the row expires by the database clock",
          "[fencing][library][needs:cut-off][needs:epoch_ms_sql]") {
    auto db = sqlock_test::fresh_database();
    Seen seen;
    reliability::CutOff cut;
    cut.prepare(db.url);
    sqlock::Locker locker(cut.url, locker_options().table(db.table));
    auto lock = locker.lock("warned", watched(seen));
    CHECK(lock.valid_until() > steady::now() + 2s);
    cut.apply();
    check_warning(db, lock, seen);
    // The Lock's release cannot get through either: give it up quietly.
    lock.detach();
    cut.undo();
}

TEST_CASE("library: valid_until counts from when the acquisition or renewal was sent",
          "[fencing][library]") {
    auto db = sqlock_test::fresh_database();
    auto locker = db.open();
    const auto before = steady::now();
    auto lock = locker.lock("counted", lock_options().expires(10s));
    const auto after = steady::now();
    CHECK(lock.valid_until() >= before + 10s);
    CHECK(lock.valid_until() <= after + 10s);
    const auto first = lock.valid_until();
    std::this_thread::sleep_for(20ms);  // so that the renewal is sent later
    const auto renewing = steady::now();
    lock.renew(20s);
    CHECK(lock.valid_until() >= renewing + 20s);
    CHECK(lock.valid_until() > first);
    // A shorter renewal shortens the row's expiry, and valid_until with it.
    const auto shortening = steady::now();
    lock.renew(1s);
    CHECK(lock.valid_until() >= shortening + 1s);
    CHECK(lock.valid_until() <= steady::now() + 1s);
}

TEST_CASE("library: a lock whose lease ran out before its acquisition was confirmed is refused",
          "[fencing][library][needs:server]") {
    // Every packet 60 ms late: the insert's reply, then the renewal that
    // would vouch for the row, arrive after its 20 ms lease ended.
    auto db = sqlock_test::fresh_database();
    sqlock::Locker observer = db.open();
    observer.list("slow");  // the table exists before the relay slows down
    reliability::Relay relay(db.url);
    relay.command("slow 60");
    sqlock::LockerOptions options;
    options.table = db.table;
    sqlock::Locker slow(relay.url(), options);
    sqlock::LockOptions o;
    o.expires = 20ms;
    try {
        (void)slow.lock("slow", o);
        FAIL("a lock whose lease ran out was handed out");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK_THAT(e.what(), Catch::Contains("acquisition took longer than the lease"));
    }
    CHECK_FALSE(slow.try_lock("slow", o));
    relay.command("pass");
    // Nothing of it is held: the name is free once its row has lapsed.
    CHECK(observer.try_lock("slow"));
}

TEST_CASE("library: a server that does not answer, or refuses, fails a call within db_timeout",
          "[fencing][library][needs:server]") {
    auto db = sqlock_test::fresh_database();
    reliability::Relay relay(db.url);
    sqlock::Locker locker(relay.url(), locker_options().table(db.table).db_timeout(1s));
    // The hot path (acquire, release) and an ordinary statement (list), each
    // through a link that drops everything, then one that refuses.
    for (const char* fault : {"freeze", "refuse"}) {
        INFO("relay: " << fault);
        auto held = locker.lock("held");
        auto fails_in_time = [&](const char* what, const std::function<void()>& call) {
            INFO(what);
            // Each call on a connection the pool already holds, so that its
            // statement, not a new connection, meets the fault: a list()
            // through a passing relay leaves one there. (On a machine loaded
            // by other suites a statement may miss the 1 s db_timeout: the
            // pool then holds no connection, and the next list() makes one.)
            relay.command("pass");
            REQUIRE(eventually(
                [&] {
                    try {
                        return locker.list().size() == 1;
                    } catch (const sqlock::error& e) {
                        if (e.category() != sqlock::errc::connection) throw;
                        return false;
                    }
                },
                30s));
            relay.command(fault);
            // A call that is not bounded would wait for the frozen link for
            // ever: the relay passes again after 10 s, and the timing below
            // fails instead of the test hanging.
            std::mutex m;
            std::condition_variable cv;
            bool returned = false;
            std::thread rescue([&] {
                std::unique_lock<std::mutex> lock(m);
                if (!cv.wait_for(lock, 10s, [&] { return returned; })) relay.obeys("pass");
            });
            const auto started = steady::now();
            try {
                call();
                FAIL_CHECK(what << " through a cut-off link returned");
            } catch (const sqlock::error& e) {
                CHECK(e.category() == sqlock::errc::connection);
                CHECK(std::string(e.what()).find(sqlock_test::password_of(db.url)) ==
                      std::string::npos);
            }
            const auto took = steady::now() - started;
            {
                std::lock_guard<std::mutex> lock(m);
                returned = true;
            }
            cv.notify_one();
            rescue.join();
            // What the frozen relay held back is lost, as a partition loses
            // it: resetting its connections drops it. Passed on later, it
            // would reach the server after the call gave up (the insert or
            // delete done after all, with nobody told).
            relay.command("refuse");
            // The statement (1 s), then the pool's one retry on a new
            // connection (libpq's connect_timeout, at least 2 s); generous
            // for a loaded machine.
            CHECK(took < 6s);
        };
        fails_in_time("list()", [&] { locker.list(); });
        fails_in_time("try_lock()", [&] { locker.try_lock("other"); });
        fails_in_time("release()", [&] { held.release(); });
        relay.command("pass");
        // The failed release kept the handle: it goes through now. The
        // failed acquisition never reached the server: no row stands in the
        // way.
        REQUIRE_NOTHROW(held.release());
        auto other = locker.try_lock("other");
        CHECK(other.has_value());
        if (other) other->release();
        CHECK(locker.list().empty());
    }
}

TEST_CASE("library: on_renewed_late fires when a renewal gets through after failed ones",
          "[fencing][library][needs:cut-off]") {
    auto db = sqlock_test::fresh_database();
    struct Late {
        std::atomic<bool> warned{false};
        std::atomic<int> calls{0};
        std::atomic<int> failures{0};
        std::atomic<std::int64_t> left_ms{-1};
        std::atomic<bool> lost{false};
    } late;
    // Renewals every second, each bounded by a second; the warning comes
    // 4.5 s after the last renewal that got through, when at least one has
    // failed (the renewal due at 1 s gave up at 2 s). Undoing the fault
    // then lets the next one through, 1.5 s before valid_until.
    sqlock::LockOptions o;
    o.expires = 6s;
    o.heartbeat = true;
    o.warn_before = 1500ms;
    o.on_expiring = [&late](const std::string&, std::int64_t, steady::time_point) {
        late.warned = true;
    };
    o.on_renewed_late = [&late](const std::string& name, std::int64_t, int failed,
                                sqlock::duration left) {
        if (name != "late") return;
        late.failures = failed;
        late.left_ms = left.count();
        ++late.calls;
    };
    o.on_lost = [&late](const std::string&, std::int64_t) { late.lost = true; };

    reliability::CutOff cut;
    cut.prepare(db.url);
    sqlock::Locker locker(cut.url, locker_options().table(db.table));
    auto lock = locker.lock("late", o);
    const auto cut_until = lock.valid_until();
    cut.apply();
    REQUIRE(eventually([&] { return late.warned.load(); }, 20s));
    CHECK(late.calls.load() == 0);  // nothing got through yet
    cut.undo();
    REQUIRE(eventually([&] { return late.calls.load() > 0; }, 10s));
    CHECK(late.calls.load() == 1);
    CHECK(late.failures.load() >= 1);
    // Sent after the first failure (2 s in), before valid_until.
    CHECK(late.left_ms.load() > 0);
    CHECK(late.left_ms.load() <= 4000);
    CHECK(lock.valid_until() > cut_until);
    CHECK_FALSE(late.lost.load());
}

// A release whose DELETE reaches the server after the client gave up on it:
// the row is gone by our own hand, and the next release() finds nothing. It
// says "lost", on purpose (docs/semantics.md, "Threads"): from a missing row
// it cannot tell its own delete from a row lost in a crash failover to an
// asynchronous standby, after which another host may hold the name. The
// name is free afterwards.
TEST_CASE("library: a release whose reply was lost says lost on the next try, and the name is free",
          "[fencing][library][needs:server]") {
    auto db = sqlock_test::fresh_database();
    reliability::Relay relay(db.url);
    sqlock::Locker locker(relay.url(),
                          locker_options().table(db.table).pool_size(1).db_timeout(1s));
    // The pool's one connection has prepared the release statement: what
    // the frozen relay holds back is then the DELETE itself, not its PREPARE.
    locker.lock("warm-up").release();
    auto lock = locker.lock("reply-lost", lock_options().expires(60s));
    // The release's statement waits in the frozen relay; the call gives up
    // (1 s, then the pool's retry meets a connect that hangs).
    relay.command("freeze");
    try {
        lock.release();
        FAIL_CHECK("a release through a frozen link returned");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::connection);
    }
    // Passing again delivers the held-back DELETE: it commits, and its reply
    // goes to a connection the client has abandoned.
    relay.command("pass");
    const std::string count = "SELECT count(*) FROM " + db.table;
    REQUIRE(
        eventually([&] { return reliability::query(db, count).at(0).at(0).value() == "0"; }, 10s));
    try {
        lock.release();
        FAIL_CHECK("a release that found no row returned");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
    }
    CHECK(locker.try_lock("reply-lost").has_value());
}
