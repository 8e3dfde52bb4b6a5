// Promises the README makes about the library that no other test checked:
// `wait_forever`, `auto_init`, the default lease, and the connection pool's
// hand-out order (most recently used first, to waiting threads in arrival
// order).
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iomanip>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "backend_factory.hpp"  // internal: the pool is tested directly
#include "connection_pool.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;

TEST_CASE("promise: wait_forever waits past `wait` until the lock frees", "[promises][waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    // Not renewed, so it frees when the lease runs out: the waiter cannot
    // get it sooner, and gets it in the end.
    auto held = locker.lock("forever", {.expires = 3s});
    const std::string elapsed_file =
        sqlock_test::scratch_dir() + "/forever-" + std::to_string(getpid());
    // Forked before this process has any other thread (none exists yet: no
    // wait, no heartbeat).
    sqlock_test::Process child = sqlock_test::Process::fork([&] {
        try {
            auto waiter = db.open();
            auto start = std::chrono::steady_clock::now();
            // `wait` is ignored with wait_forever: a wait of 100 ms would
            // time out long before the lease ends.
            auto lock = waiter.lock("forever", {.wait = 100ms, .wait_forever = true});
            auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
            if (FILE* f = std::fopen(elapsed_file.c_str(), "w")) {
                std::fprintf(f, "%lld\n", static_cast<long long>(ms));
                std::fclose(f);
            }
            const int code = lock.id() > held.id() ? 0 : 11;
            lock.release();
            return code;
        } catch (const sqlock::error& e) {
            std::fprintf(stderr, "waiter: %s\n", e.what());
            return 12;
        }
    });
    // The lease is 3 s; 30 s is generous for a machine 3x slower.
    CHECK(child.finish(30s).code == 0);
    auto ids = sqlock_test::read_ids(elapsed_file);
    REQUIRE(ids.size() == 1);
    // It really waited (and did not merely arrive after the lease): the
    // child started within moments of the lock being taken, 3 s before its
    // lease ended; 1 s leaves 2 s for a slow start.
    CHECK(ids[0] >= 1000);
    try {
        held.release();
        FAIL("the lock was taken over, its release must report it lost");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
    }
}

TEST_CASE("promise: the default lease is one hour", "[promises][lease]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK(sqlock::LockOptions{}.expires == std::chrono::hours(1));
    // Both ends are the database's: exact, whatever the machine's speed.
    auto lock = locker.try_lock("default-lease");
    REQUIRE(lock);
    CHECK(sqlock_test::seconds_between(lock->created(), lock->expires()) ==
          Approx(3600).margin(0.002));
    auto row = locker.show("default-lease");
    REQUIRE(row);
    CHECK(sqlock_test::seconds_between(row->created, row->expires) == Approx(3600).margin(0.002));
    CHECK(row->seconds_left > 3500);
    CHECK(row->seconds_left <= 3600);

    auto slot = locker.try_acquire_slot("default-lease-pool", 2);
    REQUIRE(slot);
    CHECK(sqlock_test::seconds_between(slot->created(), slot->expires()) ==
          Approx(3600).margin(0.002));

    // renew() without a length renews by the lease the lock was taken with.
    auto short_lease = locker.try_lock("renewed", {.expires = 10min});
    REQUIRE(short_lease);
    short_lease->renew();
    auto renewed = locker.show("renewed");
    REQUIRE(renewed);
    CHECK(renewed->seconds_left > 500);
    CHECK(renewed->seconds_left <= 600);
}

TEST_CASE("promise: auto_init creates the table only when asked, or for the embedded default",
          "[promises][init]") {
    using mode = sqlock::LockerOptions::auto_init_mode;
    auto db = fresh_database();  // the database exists; the table below does not
    const std::string table =
        sqlock_test::is_server_backend() ? db.table + "_auto" : "auto_created";
    auto needs_init = [&](mode m) {
        sqlock::Locker locker(db.url, {.table = table, .auto_init = m});
        try {
            locker.try_lock("first");
            FAIL("the table was there or was created");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::configuration);
            CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
        }
    };

    SECTION("by default a URL's table is not created: configuration error, nothing made") {
        needs_init(mode::when_default);
        needs_init(mode::never);  // still missing after the attempt above
    }
    SECTION("`always` creates it on first use, for everyone") {
        sqlock::Locker creating(db.url, {.table = table, .auto_init = mode::always});
        auto lock = creating.try_lock("first");
        REQUIRE(lock);
        sqlock::Locker other(db.url, {.table = table, .auto_init = mode::never});
        CHECK_FALSE(other.try_lock("first"));
        CHECK(other.list().size() == 1);
    }
    SECTION("the embedded default: created by default, not with `never`") {
        const std::string state = sqlock_test::scratch_dir() + "/auto-init-state";
        const char* old_xdg = std::getenv("XDG_STATE_HOME");
        const char* old_db = std::getenv("SQLOCK_DB");
        const std::string saved_xdg = old_xdg ? old_xdg : "", saved_db = old_db ? old_db : "";
        struct Restore {
            bool had_xdg, had_db;
            const std::string &xdg, &db;
            ~Restore() {
                had_xdg ? setenv("XDG_STATE_HOME", xdg.c_str(), 1) : unsetenv("XDG_STATE_HOME");
                had_db ? setenv("SQLOCK_DB", db.c_str(), 1) : unsetenv("SQLOCK_DB");
            }
        } restore{old_xdg != nullptr, old_db != nullptr, saved_xdg, saved_db};
        setenv("XDG_STATE_HOME", state.c_str(), 1);
        unsetenv("SQLOCK_DB");
        {
            sqlock::Locker never("", {.auto_init = mode::never});
            try {
                never.try_lock("first");
                FAIL("`never` created the table of the embedded default");
            } catch (const sqlock::error& e) {
                CHECK(e.category() == sqlock::errc::configuration);
            }
        }
        sqlock::Locker embedded("");
        CHECK(embedded.try_lock("first"));
    }
}

TEST_CASE("promise: the pool hands connections to waiting threads in arrival order",
          "[promises][pool]") {
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    sqlock::detail::ConnectionPool pool([&] { return backend->connect(); }, 1, 20s);

    std::mutex mutex;
    std::vector<int> served;  // thread numbers, in the order they got the connection
    {
        std::vector<sqlock_test::ScopedThread> threads;  // joined last: after `only` went back
        auto only = pool.checkout();  // the only connection: everyone else queues
        for (int i = 0; i < 5; ++i) {
            threads.emplace_back([&, i] {
                try {
                    auto c = pool.checkout();
                    c->find("probe");  // a real statement on the connection
                    std::lock_guard<std::mutex> guard(mutex);
                    served.push_back(i);
                } catch (const sqlock::error&) {
                    std::lock_guard<std::mutex> guard(mutex);
                    served.push_back(-1);
                }
            });
            // Thread i is in line before thread i+1 starts: arrival order is
            // known, not guessed.
            const auto queued = static_cast<std::size_t>(i + 1);
            REQUIRE(eventually([&] { return pool.waiting() == queued; }));
        }
    }  // `only` goes back to the pool; each ScopedThread waits for its thread
    CHECK(served == std::vector<int>{0, 1, 2, 3, 4});
}

TEST_CASE("promise: the pool hands out the most recently used connection first",
          "[promises][pool]") {
    using Handle = sqlock::detail::ConnectionPool::Handle;
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    sqlock::detail::ConnectionPool pool([&] { return backend->connect(); }, 2, 20s);
    std::optional<Handle> x, y;
    x.emplace(pool.checkout());
    y.emplace(pool.checkout());
    const sqlock::detail::Connection* a = &**x;
    const sqlock::detail::Connection* b = &**y;
    REQUIRE(a != b);
    (*x)->find("probe");
    (*y)->find("probe");

    // Whichever came back last goes out first, in both orders.
    y.reset();
    x.reset();
    x.emplace(pool.checkout());
    CHECK(&**x == a);
    y.emplace(pool.checkout());
    CHECK(&**y == b);

    x.reset();
    y.reset();
    x.emplace(pool.checkout());
    CHECK(&**x == b);
}

// A row found held by our own owner string is ours (claim_own_holder: an
// earlier statement of ours took it, and its answer never reached us). It
// counts for the time the database said it had left, not for a new lease
// from this attempt's sending: that statement may have been sent before,
// and valid_until must not outlast the row.
TEST_CASE("promise: a row of ours found again counts for the time it had left, not a new lease",
          "[promises][lease]") {
    auto db = fresh_database();
    auto backend =
        sqlock::detail::make_backend(sqlock::detail::parse_database_url(db.url), db.table, 10s);
    auto c = backend->connect();
    const std::string owner = R"({"by":"test","guid":"00112233445566778899aabbccddeeff"})";
    auto first = c->try_acquire("found-again", 30s, owner);
    REQUIRE(first.acquired);
    CHECK_FALSE(sqlock::detail::claim_own_holder(first, owner));  // already acquired
    CHECK_FALSE(first.claimed);  // written by this statement: the whole lease

    // Asked again by the same owner, for 60 s: the live row is found held
    // by ourselves.
    auto again = c->try_acquire("found-again", 60s, owner);
    REQUIRE_FALSE(again.acquired);
    REQUIRE(sqlock::detail::claim_own_holder(again, owner));
    CHECK(again.claimed);
    CHECK_FALSE(again.holder);
    CHECK(again.acquired->id == first.acquired->id);
    const auto certain = sqlock::detail::certain_lease(*again.acquired, 60s);
    CHECK(certain < 30s);
    CHECK(certain > 20s);

    // Another owner's row is not claimed.
    auto other = c->try_acquire("found-again", 60s, owner + " ");
    CHECK_FALSE(sqlock::detail::claim_own_holder(other, owner + " "));
    CHECK_FALSE(other.acquired);
}
