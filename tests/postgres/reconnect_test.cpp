// Broken links: a lock is a row, so it outlives its holder's connection; after
// a reconnect, release and renew work as before.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "pg_test.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using steady = std::chrono::steady_clock;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

// A Locker whose connections carry application_name `app`, so a test can
// find (and kill) exactly them.
sqlock::Locker tagged_locker(const sqlock_test::Database& db, const std::string& app,
                             std::size_t pool_size = 4) {
    sqlock::LockerOptions options;
    options.table = db.table;
    options.pool_size = pool_size;
    return sqlock::Locker(pg_test::with_param(db.url, "application_name", app), options);
}

int terminate_backends(const std::string& url, const std::string& app) {
    return std::stoi(pg_test::query(url,
                                    "SELECT count(pg_terminate_backend(pid)) FROM "
                                    "pg_stat_activity WHERE application_name = '" +
                                        app + "'"));
}

// How long until a waiter in `waiter` gets `name` after `holder` lets go.
std::chrono::milliseconds handoff_delay(const sqlock_test::Database& db, sqlock::Locker& waiter,
                                        sqlock::Lock& held, const std::string& name) {
    std::atomic<bool> waiting{false};
    steady::time_point acquired;
    sqlock_test::ScopedThread t([&] {
        waiting = true;
        try {
            auto lock = waiter.lock(name, lock_options().wait(30s));
            acquired = steady::now();
        } catch (...) {
            acquired = steady::time_point::max();  // reported as a huge delay
        }
    });
    // Its first attempt has drawn an id: from then on it sleeps until woken.
    const std::int64_t held_id = held.id();
    REQUIRE(sqlock_test::eventually(
        [&] { return waiting && pg_test::last_id_drawn(db.url, db.table) > held_id; }));
    auto released = steady::now();
    held.release();
    t.join();
    return std::chrono::duration_cast<std::chrono::milliseconds>(acquired - released);
}

}  // namespace

TEST_CASE("release and renew work after the holder's connection was terminated", "[pg]") {
    auto db = fresh_database();
    const std::string app = pg_test::unique("terminated");
    auto locker = tagged_locker(db, app);
    auto lock = locker.lock("survivor", lock_options().expires(1h));
    auto other = locker.lock("other", lock_options().expires(1h));
    REQUIRE(terminate_backends(db.url, app) >= 1);
    // The row is still there: nobody else may take it.
    CHECK_FALSE(db.open().try_lock("survivor"));
    CHECK_NOTHROW(lock.renew(2h));
    CHECK(lock.held());
    REQUIRE(terminate_backends(db.url, app) >= 1);
    CHECK_NOTHROW(lock.release());
    CHECK_FALSE(locker.show("survivor"));
    REQUIRE(terminate_backends(db.url, app) >= 1);
    CHECK_NOTHROW(other.release());
    CHECK(locker.list().empty());
}

TEST_CASE("the start of a run is not sent again after its connection broke", "[pg]") {
    auto db = fresh_database();
    auto locker = db.open();
    locker.init();
    auto lock = locker.lock("job", lock_options().expires(1h));
    // Every other insert into the history ends its own session, as a link
    // lost once the statement had gone out. Sent again on a new connection,
    // it would pass: had the first committed, that would be a second run.
    const std::string breaker = db.table + "_breaker";
    sqlock_test::exec_sql(db, "CREATE SEQUENCE " + breaker);
    sqlock_test::exec_sql(db, "CREATE FUNCTION " + breaker +
                                  "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF nextval('" +
                                  breaker +
                                  "') % 2 = 1 THEN PERFORM pg_terminate_backend(pg_backend_pid());"
                                  " END IF; RETURN NEW; END $$");
    sqlock_test::exec_sql(db, "CREATE TRIGGER sqlock_breaker BEFORE INSERT ON " + db.table +
                                  "_runs FOR EACH ROW EXECUTE PROCEDURE " + breaker + "()");
    auto broken = [](auto&& start) {
        try {
            start();
        } catch (const sqlock::error& e) {
            INFO(e.what());
            CHECK(e.category() == sqlock::errc::connection);
            return true;
        }
        return false;
    };
    CHECK(broken([&] { sqlock::RunHistory(locker).start_run(lock); }));
    CHECK(sqlock::RunHistory(locker).start_run(lock) > 0);
    CHECK(broken([&] { sqlock::RunHistory(locker).start_run_unless_paused(lock); }));
    CHECK(sqlock::RunHistory(locker).start_run_unless_paused(lock).run_id);
    CHECK(sqlock::RunHistory(locker).runs().size() == 2);
    CHECK(lock.held());
}

TEST_CASE("a terminated listener reconnects and waiters are still woken", "[pg]") {
    auto db = fresh_database();
    const std::string app = pg_test::unique("listener");
    auto waiter = tagged_locker(db, app);
    auto holder = db.open();
    auto first = holder.lock("wake");
    CHECK(handoff_delay(db, waiter, first, "wake") < 1s);
    // Kill every connection of the waiting Locker, its listener included.
    REQUIRE(terminate_backends(db.url, app) >= 1);
    auto second = holder.lock("wake", lock_options().wait(10s));
    CHECK(handoff_delay(db, waiter, second, "wake") < 1s);
}

TEST_CASE("a waiter whose listener is terminated mid-wait says again that it waits", "[pg]") {
    auto db = fresh_database();
    auto waiter = db.open();
    auto holder = db.open();
    auto held = holder.lock("wake", lock_options().expires(1h));
    steady::time_point acquired = steady::time_point::max();
    sqlock_test::ScopedThread t([&] {
        auto lock = waiter.lock("wake", lock_options().wait(30s));
        acquired = steady::now();
    });
    std::string said;
    REQUIRE(sqlock_test::eventually([&] {
        said = pg_test::waiting_sessions(db.url, db.table);
        return !said.empty();
    }));
    // The listener's session goes, and with it what it said; the new one
    // must say it again, or the release below would wake nobody until the
    // waiter's 5 s safety-net re-check.
    REQUIRE(pg_test::query(db.url, "SELECT pg_terminate_backend(" + said + ")") == "t");
    REQUIRE(sqlock_test::eventually([&] {
        const std::string now = pg_test::waiting_sessions(db.url, db.table);
        return !now.empty() && now != said;
    }));
    const auto released = steady::now();
    held.release();
    t.join();
    CHECK(acquired - released < 1s);
}

TEST_CASE("a lock survives a server restart; release and renew work afterwards",
          "[pg][serial][needs:server-script][needs:server-dir]") {
    auto db = fresh_database();
    auto locker = db.open(locker_options().pool_size(2));
    auto holder = db.open();
    auto renewed = locker.lock("renewed", lock_options().expires(1h));
    auto released = locker.lock("released", lock_options().expires(1h));
    // Start the waiting machinery (and its listener) before the restart.
    auto wake = holder.lock("wake");
    CHECK(handoff_delay(db, locker, wake, "wake") < 1s);
    auto before = renewed.expires();

    pg_test::restart_server();

    CHECK_NOTHROW(renewed.renew(2h));
    CHECK(renewed.expires() > before);
    CHECK(renewed.held());
    CHECK_NOTHROW(released.release());
    CHECK_FALSE(locker.show("released"));
    CHECK_FALSE(db.open().try_lock("renewed"));
    CHECK_NOTHROW(renewed.release());
    // The listener found its way back: waiters are woken promptly again.
    auto again = holder.lock("wake", lock_options().wait(10s));
    CHECK(handoff_delay(db, locker, again, "wake") < 1s);
    CHECK(locker.list().empty());
}

TEST_CASE("a heartbeat keeps a lock across a server restart",
          "[pg][serial][needs:server-script][needs:server-dir]") {
    auto db = fresh_database();
    auto locker = db.open();
    // The lease must outlast a restart with room for renewals: derived from
    // a restart measured in this run (about 0.5 s here), at least 3 s.
    const auto before = steady::now();
    pg_test::restart_server();
    const auto restart =
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - before);
    const auto lease = std::max<std::chrono::milliseconds>(3s, 6 * restart);
    INFO("one restart took " << restart.count() << " ms; lease " << lease.count() << " ms");
    std::atomic<bool> lost{false};
    auto lock = locker.lock("beating", lock_options().expires(lease).heartbeat(true).on_lost(
                                           [&](const std::string&, std::int64_t) { lost = true; }));
    pg_test::restart_server();
    // An observation window longer than the lease: only renewals kept it.
    std::this_thread::sleep_for(lease + 1s);
    CHECK_FALSE(lost);
    CHECK(lock.held());
    CHECK_NOTHROW(lock.release());
}
