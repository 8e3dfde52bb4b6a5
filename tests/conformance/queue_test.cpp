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
using sqlock_test::lock_options;

namespace {

using steady = std::chrono::steady_clock;

// How a waiting process waits: its lock's lease, its place's lease (zero:
// the default, derived from the lock's lease), how long it holds the name
// once it has it, and, when given, an on_waiting hook called that often.
struct Waiting {
    std::chrono::milliseconds queue_lease{0};
    std::chrono::milliseconds expires = 60s;
    std::chrono::milliseconds hold = 30ms;
    std::optional<std::chrono::milliseconds> progress_every{};
};

// A waiting process: waits for `name` (a lock, or a semaphore of
// `capacity`), then writes its `index` to `log` and holds for a job of
// `how.hold`. A lock's log is in acquisition order (the write is made while
// holding); a semaphore's holders write concurrently, so each line also
// carries the row's id, which grows in acquisition order (a fencing token):
// see by_acquisition().
pid_t spawn_waiter(const sqlock_test::Database& db, const std::string& name, int capacity,
                   int index, const std::string& log, const Waiting& how) {
    const pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::runs_code);
    if (pid != 0) return pid;
    int code = 2;
    try {
        auto locker = db.open();
        sqlock::LockOptions o;
        o.expires = how.expires;
        o.wait = 120s;
        o.queue_lease = how.queue_lease;
        if (how.progress_every) {
            o.progress_every = *how.progress_every;
            o.on_waiting = [](const sqlock::LockInfo*, sqlock::duration) { return true; };
        }
        sqlock::Lock lock =
            capacity == 0 ? locker.lock(name, o) : locker.acquire_slot(name, capacity, o);
        sqlock_test::append_id(log, capacity == 0 ? index : lock.id() * 1000 + index);
        std::this_thread::sleep_for(how.hold);
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
                           const Waiting& how) {
    std::vector<pid_t> pids;
    for (int i = 0; i < count; ++i) {
        pids.push_back(spawn_waiter(db, name, capacity, i, log, how));
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
    auto held = locker.lock("line", lock_options().expires(60s));
    constexpr int waiters = 6;
    const std::vector<pid_t> pids = line_up(db, locker, "line", 0, waiters, log, Waiting{});
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
    auto held = locker.lock("hooked", lock_options().expires(60s));
    constexpr int waiters = 8;
    const std::vector<pid_t> pids =
        line_up(db, locker, "hooked", 0, waiters, log, Waiting{120s, 60s, 30ms, 10ms});
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
    auto first = locker.acquire_slot("pool", 2, lock_options().expires(60s));
    auto second = locker.acquire_slot("pool", 2, lock_options().expires(60s));
    constexpr int waiters = 5;
    const std::vector<pid_t> pids = line_up(db, locker, "pool", 2, waiters, log, Waiting{});
    first.release();
    second.release();
    CHECK(wait_all(pids) == std::vector<int>(waiters, 0));
    CHECK(by_acquisition(sqlock_test::read_ids(log)) == std::vector<long long>{0, 1, 2, 3, 4});
}

TEST_CASE("a waiter killed in the middle of the line stalls it no longer than its lock's lease",
          "[queue]") {
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("killed");
    auto held = locker.lock("line", lock_options().expires(60s));
    // The default place lease: the waiters' lock lease, 1 s.
    const std::vector<pid_t> pids = line_up(db, locker, "line", 0, 3, log, Waiting{0ms, 1s});
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
    auto held = locker.lock("line", lock_options().expires(60s));
    std::vector<pid_t> pids;
    pids.push_back(spawn_waiter(db, "line", 0, 0, log, Waiting{5s}));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("line") == 1u; }));
    // Frozen: as a waiter cut off from the database, it renews nothing.
    freeze(pids[0], db);
    pids.push_back(spawn_waiter(db, "line", 0, 1, log, Waiting{5s}));
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

TEST_CASE(
    "a waiter frozen at the head of a free name stalls it no longer than its lock's lease, and "
    "joins again at the back when it thaws",
    "[queue]") {
    // Each waiter's lock lease is 2 s, and its place's lease the default:
    // the same 2 s. A holder frozen as long would stall the name for its
    // lease; a frozen waiter must not stall it any longer.
    constexpr auto lease = 2s;
    auto db = fresh_database();
    auto locker = db.open();
    const std::string log = log_path("frozen-head");
    auto held = locker.lock("head", lock_options().expires(60s));
    std::vector<pid_t> pids;
    pids.push_back(spawn_waiter(db, "head", 0, 0, log, Waiting{0ms, lease}));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("head") == 1u; }));
    // The second holds the name long enough for the frozen one to thaw
    // while it does, with the third still waiting behind it.
    pids.push_back(spawn_waiter(db, "head", 0, 1, log, Waiting{0ms, lease, 1500ms}));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("head") == 2u; }));
    pids.push_back(spawn_waiter(db, "head", 0, 2, log, Waiting{0ms, lease}));
    REQUIRE(sqlock_test::eventually([&] { return locker.queue_length("head") == 3u; }));
    // Frozen once all three are in line: frozen earlier, its place could
    // lapse (2 s) while a loaded machine starts the other two, and the
    // line would never be seen three long.
    freeze(pids[0], db);
    const auto released = steady::now();
    held.release();
    REQUIRE(sqlock_test::eventually([&] { return !sqlock_test::read_ids(log).empty(); }, 30s));
    const auto stalled =
        std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - released);
    INFO("the second waiter got the free name " << stalled.count() << " ms after its release");
    // The frozen place lapses at most its lease after its last renewal,
    // which came before the release; the one behind looks then. The margin
    // is for a loaded machine; the place lease before it was derived from
    // the lock's was 15 s.
    CHECK(stalled < lease + 1500ms);
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{1});
    // Thawed while the second holds the name: its place has lapsed, so it
    // joins again behind the third instead of going first.
    REQUIRE(kill(pids[0], SIGCONT) == 0);
    CHECK(wait_all(pids) == std::vector<int>{0, 0, 0});
    CHECK(sqlock_test::read_ids(log) == std::vector<long long>{1, 2, 0});
}

TEST_CASE("a waiter that gives up leaves the line at once", "[queue]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto waiter = db.open();
    auto held = holder.lock("line", lock_options().expires(60s));
    CHECK_THROWS_AS(waiter.lock("line", lock_options().wait(300ms)), sqlock::error);
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
    for (auto lease : {sqlock::duration(-1), sqlock::duration(99), sqlock::duration(3600001)}) {
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
