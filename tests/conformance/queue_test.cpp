// The queue of waiters: callers that wait are served in the order they
// started to wait, on every backend, across processes.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "process.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;

namespace {

using steady = std::chrono::steady_clock;

// A waiting process: waits for `name` (a lock, or a semaphore of
// `capacity`), then writes its `index` to `log` and holds for a 30 ms job.
// A lock's log is in acquisition order (the write is made while holding);
// a semaphore's holders write concurrently, so each line also carries the
// row's id, which grows in acquisition order (a fencing token): see
// by_acquisition().
// `progress_every`, when given, has an on_waiting hook called that often.
pid_t spawn_waiter(const sqlock_test::Database& db, const std::string& name, int capacity,
                   int index, const std::string& log, std::chrono::milliseconds queue_lease,
                   std::optional<std::chrono::milliseconds> progress_every = std::nullopt) {
    const pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
    if (pid != 0) return pid;
    int code = 2;
    try {
        auto locker = db.open();
        sqlock::LockOptions o;
        o.expires = 60s;
        o.wait = 120s;
        o.queue_lease = queue_lease;
        if (progress_every) {
            o.progress_every = *progress_every;
            o.on_waiting = [](const sqlock::LockInfo*, sqlock::duration) { return true; };
        }
        sqlock::Lock lock =
            capacity == 0 ? locker.lock(name, o) : locker.acquire_slot(name, capacity, o);
        sqlock_test::append_id(log, capacity == 0 ? index : lock.id() * 1000 + index);
        std::this_thread::sleep_for(30ms);
        lock.release();
        code = 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "waiter %d: %s\n", index, e.what());
    }
    _exit(code);
}

// `count` waiters for `name`, indexes 0..count-1, each in line before the
// next one starts: the arrival order is known.
std::vector<pid_t> line_up(const sqlock_test::Database& db, sqlock::Locker& observer,
                           const std::string& name, int capacity, int count, const std::string& log,
                           std::chrono::milliseconds queue_lease,
                           std::optional<std::chrono::milliseconds> progress_every = std::nullopt) {
    std::vector<pid_t> pids;
    for (int i = 0; i < count; ++i) {
        pids.push_back(spawn_waiter(db, name, capacity, i, log, queue_lease, progress_every));
        REQUIRE(sqlock_test::eventually([&] { return observer.queue_length(name) == i + 1u; }));
    }
    return pids;
}

// Waits for every child, each bounded; their exit codes.
std::vector<int> wait_all(const std::vector<pid_t>& pids) {
    std::vector<int> codes;
    for (pid_t pid : pids) codes.push_back(sqlock_test::wait_child(pid, 120s).value_or(-1));
    return codes;
}

// A semaphore waiters' log (see spawn_waiter) as indexes in the order the
// slots were taken.
std::vector<long long> by_acquisition(std::vector<long long> lines) {
    std::sort(lines.begin(), lines.end());
    for (long long& line : lines) line %= 1000;
    return lines;
}

std::string log_path(const char* what) {
    return sqlock_test::scratch_dir() + "/" + what + "-" + std::to_string(getpid());
}

// Stops `pid` at a moment it holds no write lock of an embedded database:
// stopped inside a write, it would stop every writer with it, which is a
// fault of another kind (a stuck writer, tests/reliability). Servers: at
// once.
void freeze(pid_t pid, const sqlock_test::Database& db) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        REQUIRE(kill(pid, SIGSTOP) == 0);
        if (sqlock_test::is_server_backend()) return;
        const char* sep = db.url.find('?') == std::string::npos ? "?" : "&";
        sqlock::LockerOptions options;
        options.table = db.table;
        try {
            sqlock::Locker probe(db.url + sep + "busy_timeout=50", options);
            if (probe.try_lock("freeze-probe")) return;  // a write went through
        } catch (const sqlock::error&) {
            // Busy: the stopped process holds the write lock.
        }
        REQUIRE(kill(pid, SIGCONT) == 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(3));  // pacing the retries
    }
    FAIL("could not stop the process outside a write");
}

}  // namespace

TEST_CASE("waiters are served in the order they started to wait", "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("order");
    auto held = locker.lock("line", {.expires = 60s});
    constexpr int waiters = 6;
    const std::vector<pid_t> pids = line_up(db, locker, "line", 0, waiters, log, 15s);
    held.release();
    CHECK(wait_all(pids) == std::vector<int>(waiters, 0));
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{0, 1, 2, 3, 4, 5});
    CHECK(locker.queue_length("line") == 0);
}

TEST_CASE("waiters woken often by their progress hook still look at their place in time",
          "[queue]") {
    // A waiter behind others looks at its place at the line's pace. The
    // hook wakes it every 10 ms, more often than that pace: each wake-up
    // must not put the look off again, or the waiter learns it is next only
    // when its place is renewed, a third of its 120 s lease later, and the
    // line idles until then.
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("hooked");
    auto held = locker.lock("hooked", {.expires = 60s});
    constexpr int waiters = 8;
    const std::vector<pid_t> pids = line_up(db, locker, "hooked", 0, waiters, log, 120s, 10ms);
    const auto released = steady::now();
    held.release();
    CHECK(wait_all(pids) == std::vector<int>(waiters, 0));
    const auto drained =
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - released);
    // Eight 30 ms jobs and their hand-offs (under a second), against idle
    // spells of up to 40 s (17 s in all, measured without the pace kept).
    CHECK(drained < 10s);
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{0, 1, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("waiters for a semaphore take its free slots in the order they came", "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("slots");
    auto first = locker.acquire_slot("pool", 2, {.expires = 60s});
    auto second = locker.acquire_slot("pool", 2, {.expires = 60s});
    constexpr int waiters = 5;
    const std::vector<pid_t> pids = line_up(db, locker, "pool", 2, waiters, log, 15s);
    first.release();
    second.release();
    CHECK(wait_all(pids) == std::vector<int>(waiters, 0));
    CHECK(by_acquisition(sqlock_test::read_ids(log)) == std::vector<long long>{0, 1, 2, 3, 4});
}

TEST_CASE("a waiter killed in the middle of the line stalls it no longer than its place's lease",
          "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("killed");
    auto held = locker.lock("line", {.expires = 60s});
    const std::vector<pid_t> pids = line_up(db, locker, "line", 0, 3, log, 1s);
    kill(pids[1], SIGKILL);
    const auto released = steady::now();
    held.release();
    CHECK(sqlock_test::wait_child(pids[0], 60s) == 0);
    CHECK(sqlock_test::wait_child(pids[2], 60s) == 0);
    const auto took = steady::now() - released;
    CHECK(sqlock_test::wait_child(pids[1], 10s) == 128 + SIGKILL);
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{0, 2});
    // The dead waiter's place lapses 1 s after its last renewal; then the
    // one behind it sees itself first at its next look. Generous for a
    // sanitizer build on a loaded machine, far from "stalled".
    CHECK(took < 10s);
}

TEST_CASE(
    "a frozen waiter first in line: callers that do not wait let it go first, and the one "
    "behind it gets the lock once its place lapses",
    "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("frozen");
    auto held = locker.lock("line", {.expires = 60s});
    std::vector<pid_t> pids;
    pids.push_back(spawn_waiter(db, "line", 0, 0, log, 5s));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("line") == 1u; }));
    // Frozen: as a waiter cut off from the database, it renews nothing.
    freeze(pids[0], db);
    pids.push_back(spawn_waiter(db, "line", 0, 1, log, 5s));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("line") == 2u; }));
    held.release();
    // Free, but promised to the line: one that does not wait is refused.
    CHECK_FALSE(locker.try_lock("line"));
    try {
        (void)locker.lock("line");
        FAIL("a caller that does not wait took a name from under the line");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK_THAT(e.what(), Catch::Contains("waiting"));
    }
    // The frozen one's place lapses (5 s at most after its last renewal);
    // the second in line then goes first.
    CHECK(sqlock_test::wait_child(pids[1], 60s) == 0);
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{1});
    // Thawed, it finds its place lapsed, joins again and is served.
    REQUIRE(kill(pids[0], SIGCONT) == 0);
    CHECK(sqlock_test::wait_child(pids[0], 60s) == 0);
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{1, 0});
}

TEST_CASE("a waiter that gives up leaves the line at once", "[queue]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto waiter = db.open();
    auto held = holder.lock("line", {.expires = 60s});
    CHECK_THROWS_AS(waiter.lock("line", {.wait = 300ms}), sqlock::error);
    CHECK(holder.queue_length("line") == 0);
    // Interrupted by its progress hook: the same.
    sqlock::LockOptions o;
    o.wait_forever = true;
    o.progress_every = 50ms;
    o.on_waiting = [&](const sqlock::LockInfo*, sqlock::duration waited) { return waited < 200ms; };
    CHECK_THROWS_AS(waiter.lock("line", o), sqlock::error);
    CHECK(holder.queue_length("line") == 0);
    // Free now, and nobody in line: a caller that does not wait gets it.
    held.release();
    CHECK(waiter.try_lock("line"));
}

TEST_CASE("queue_lease out of range is invalid_argument", "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    for (auto lease : {sqlock::duration(999), sqlock::duration(3600001)}) {
        sqlock::LockOptions o;
        o.queue_lease = lease;
        try {
            (void)locker.try_lock("x", o);
            FAIL("accepted queue_lease " << lease.count() << " ms");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::invalid_argument);
            CHECK_THAT(e.what(), Catch::Contains("queue_lease"));
        }
    }
}
