// PostgreSQL going away under sqlock: the server restarted, and sessions
// killed with pg_terminate_backend, while locks are held and others wait.
//
// Required: no crash, no hang, never a second holder; after the server is
// back, held locks are still held and releases succeed (or say clearly that
// the lock was lost). A caller may see errc::connection while the server is
// down; nothing else.
//
// This binary takes the shared test server down, so ctest runs it alone
// (RUN_SERIAL). It needs SQLOCK_TEST_PG_SCRIPT and SQLOCK_TEST_PG_DIR.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "catch_session.hpp"
#include "reliability_support.hpp"

using namespace std::chrono_literals;
using reliability::Shared;
using sqlock::errc;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

namespace {

using clock_type = std::chrono::steady_clock;

void restart_server() {
    const std::string cmd = std::string("\"") + std::getenv("SQLOCK_TEST_PG_SCRIPT") +
                            "\" restart \"" + std::getenv("SQLOCK_TEST_PG_DIR") + "\" >/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
}

// Ends every session of the test database except the one asking (this
// binary runs alone, so they are all ours). Returns how many.
int terminate_sessions(const sqlock_test::Database& db) {
    auto rows = reliability::query(
        db,
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
        "current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
    return std::stoi(rows.at(0).at(0).value_or("0"));
}

// What a waiter saw, in memory shared with the test.
struct WaitLog {
    std::atomic<bool> lock_held{false};  // the waiter may start: its lock is held
    std::atomic<bool> holder_released{false};
    std::atomic<int> acquired{0};
    std::atomic<int> too_early{0};  // got the lock while the holder still had it
    std::atomic<int> connection_errors{0};
    std::atomic<int> other_errors{0};
    char other_error[512]{};
};

// Waits for `name` up to `wait`, in one call: the wait itself goes through
// the server's restarts and the ends of its sessions (obstacle.hpp), so a
// connection error reaching the caller is as wrong as any other.
void wait_for(sqlock::Locker& locker, const std::string& name, WaitLog& log,
              std::chrono::seconds wait) {
    try {
        auto lock = locker.lock(name, lock_options().expires(60s).wait(wait));
        if (!log.holder_released) ++log.too_early;
        ++log.acquired;
        lock.release();
    } catch (const sqlock::error& e) {
        ++(e.category() == errc::connection ? log.connection_errors : log.other_errors);
        if (log.connection_errors + log.other_errors == 1)
            std::strncpy(log.other_error, e.what(), sizeof log.other_error - 1);
    }
}

// Tries to take `name` over and over; a held lock must never be granted.
struct Prober {
    std::atomic<bool> stop{false};
    std::atomic<int> granted{0}, refused{0}, connection_errors{0}, other_errors{0};
    std::thread thread;
    Prober(sqlock::Locker& locker, const std::string& name) {
        thread = std::thread([this, &locker, name] {
            while (!stop) {
                try {
                    if (locker.try_lock(name))
                        ++granted;
                    else
                        ++refused;
                } catch (const sqlock::error& e) {
                    ++(e.category() == errc::connection ? connection_errors : other_errors);
                }
                std::this_thread::sleep_for(5ms);  // pacing, not synchronisation
            }
        });
    }
    ~Prober() { finish(); }
    void finish() {
        stop = true;
        if (thread.joinable()) thread.join();
    }
};

}  // namespace

TEST_CASE("server restart while locks are held and others wait", "[pg-faults][restart]") {
    auto db = fresh_database();
    Shared<WaitLog> log;
    // A waiter in another process, on LISTEN/NOTIFY. Forked first, while this
    // process has no thread yet (the heartbeat below starts one): a child
    // forked beside a thread can deadlock on a lock that thread held.
    pid_t waiter = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
    if (waiter == 0) {
        int code = 0;
        try {
            if (!eventually([&] { return log->lock_held.load(); }, 60s)) _exit(2);
            auto locker = db.open();
            wait_for(locker, "restart/plain", *log, 90s);
        } catch (...) {
            code = 1;
        }
        _exit(code);
    }
    auto holder = db.open();
    auto plain = holder.lock("restart/plain", lock_options().expires(60s));
    // The lease is 20 s, far longer than a restart even on a slow machine
    // (measured here: about 0.5 s per restart, so 3x slower is still far inside):
    // the heartbeat must ride the restarts out.
    auto beating = holder.lock("restart/beating", lock_options().expires(20s).heartbeat(true));
    log->lock_held = true;
    // A prober in this process that must never be granted the held lock.
    auto probe_locker = db.open();
    Prober prober(probe_locker, "restart/plain");
    REQUIRE(eventually([&] { return prober.refused > 0; }));

    int restarts = 0;
    for (int i = 0; i < 5; ++i) {
        restart_server();
        ++restarts;
        // Held across the restart: the first call after it reconnects.
        CHECK(plain.held());
        CHECK_NOTHROW(plain.renew());
    }
    // The heartbeat rode out the restarts (each far shorter than the lease).
    CHECK_FALSE(beating.lost());
    CHECK(beating.held());
    prober.finish();
    CHECK(prober.granted == 0);
    CHECK(prober.other_errors == 0);

    log->holder_released = true;
    CHECK_NOTHROW(plain.release());
    const auto code = sqlock_test::wait_child(waiter, 120s);
    INFO("waiter's unexpected error: " << log->other_error);
    CHECK(code == 0);
    CHECK(log->acquired == 1);
    CHECK(log->too_early == 0);
    CHECK(log->other_errors == 0);
    CHECK(log->connection_errors == 0);  // waited through
    CHECK_NOTHROW(beating.release());
    CHECK(holder.list().empty());
    WARN("pg restart: " << restarts << " restarts with 2 locks held, 1 waiting process, "
                        << prober.refused.load() << " refused probes, "
                        << prober.connection_errors.load()
                        << " connection errors seen by the prober while down, 0 second holders");
}

TEST_CASE("sessions terminated while locks are held and others wait", "[pg-faults][terminate]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto waiter_locker = db.open();
    int terminated = 0, rounds = 0;
    for (int round = 0; round < 5; ++round) {
        const std::string name = "terminate/" + std::to_string(round);
        auto lock = holder.lock(name, lock_options().expires(60s).heartbeat(round % 2 == 1));
        Shared<WaitLog> log;
        sqlock_test::ScopedThread waiter([&] { wait_for(waiter_locker, name, *log, 60s); });
        auto probe_locker = db.open();
        Prober prober(probe_locker, name);
        REQUIRE(eventually([&] { return prober.refused > 0; }));
        // Every session goes: the holder's pool, the waiter's pool and its
        // LISTEN connection, the prober's.
        terminated += terminate_sessions(db);
        terminated += terminate_sessions(db);
        CHECK(lock.held());
        prober.finish();
        CHECK(prober.granted == 0);
        CHECK(prober.other_errors == 0);
        // The release right after a termination: the broken connection is
        // replaced and the release goes through.
        terminated += terminate_sessions(db);
        log->holder_released = true;
        CHECK_NOTHROW(lock.release());
        waiter.join();
        INFO("waiter's unexpected error: " << log->other_error);
        CHECK(log->acquired == 1);
        CHECK(log->too_early == 0);
        CHECK(log->other_errors == 0);
        CHECK(log->connection_errors == 0);  // waited through
        ++rounds;
    }
    CHECK(holder.list().empty());
    WARN("pg terminate: " << terminated << " sessions terminated over " << rounds
                          << " rounds, 0 second holders");
}

TEST_CASE("a lock lost while its session was gone is reported lost, not released",
          "[pg-faults][terminate]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto other = db.open();
    auto lock = holder.lock("lost-while-away", lock_options().expires(300ms));
    terminate_sessions(db);
    // The lease runs out and someone else takes the lock meanwhile.
    std::optional<sqlock::Lock> taker;
    REQUIRE(eventually([&] { return bool(taker = other.try_lock("lost-while-away")); }));
    try {
        lock.release();
        FAIL("released a lock that was taken over");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == errc::lost);
    }
    CHECK(taker->held());
}

int main(int argc, char* argv[]) {
    setenv("SQLOCK_TEST_BACKEND", "postgres", 1);
    const char* url = std::getenv("SQLOCK_TEST_PG_URL");
    const char* script = std::getenv("SQLOCK_TEST_PG_SCRIPT");
    const char* dir = std::getenv("SQLOCK_TEST_PG_DIR");
    sqlock_test::SessionSetup setup;
    if (!url || !*url || !script || !*script || !dir || !*dir) {
        const char* require = std::getenv("SQLOCK_TEST_REQUIRE_PG");
        const char* why =
            "needs SQLOCK_TEST_PG_URL, SQLOCK_TEST_PG_SCRIPT and SQLOCK_TEST_PG_DIR "
            "(tests/run-all.sh sets them)";
        if (require && std::string(require) == "1") {
            std::fprintf(stderr, "%s\n", why);
            return 1;
        }
        setup.skip_all = why;
    }
    return sqlock_test::run_catch_session(argc, argv, setup);
}
