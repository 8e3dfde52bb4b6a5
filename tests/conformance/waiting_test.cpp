// Waiting with a deadline, prompt wake-ups, re-entrancy.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <new>
#include <regex>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using steady = std::chrono::steady_clock;
using sqlock_test::lock_options;

TEST_CASE("a wait that runs out throws timeout naming holder, expiry and wait", "[waiting]") {
    auto db = fresh_database();
    auto a = db.open();
    auto held = a.lock("slow", lock_options().expires(1h));
    auto b = db.open();
    auto start = steady::now();
    try {
        b.lock("slow", lock_options().wait(300ms));
        FAIL("must time out");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::timeout);
        std::string msg = e.what();
        CHECK(msg.find("still held by") != std::string::npos);
        CHECK(msg.find(std::to_string(getpid())) != std::string::npos);
        CHECK(msg.find("expires in") != std::string::npos);
        CHECK(msg.find("after waiting") != std::string::npos);
    }
    CHECK(steady::now() - start >= 300ms);
}

TEST_CASE("busy and timeout messages read as sentences", "[waiting]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    auto only = a.acquire_slot("single", 1, lock_options().expires(1h));
    try {
        b.acquire_slot("single", 1);
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        const std::string msg = e.what();
        INFO(msg);
        CHECK(msg.find("the only slot of semaphore 'single' is taken by") != std::string::npos);
        CHECK(msg.find("all 1 slots") == std::string::npos);
    }
    auto held = a.lock("slow", lock_options().expires(1h));
    try {
        b.lock("slow", lock_options().wait(1100ms));
        FAIL("must time out");
    } catch (const sqlock::error& e) {
        const std::string msg = e.what();
        INFO(msg);
        // Rounded to a tenth of a second ("1.1s"), never "1s101ms"; any
        // elapsed time up to a minute on a slow machine gives this form.
        static const std::regex waited("after waiting [0-9]+(\\.[0-9])?s \\[");
        CHECK(std::regex_search(msg, waited));
    }
}

namespace {

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
        .count();
}

// When a waiter entered lock() and when lock() returned (steady clock,
// comparable across processes: CLOCK_MONOTONIC), in memory shared with a
// forked child.
struct WaitTimes {
    std::atomic<std::int64_t> entered{0}, returned{0};
};

WaitTimes* shared_wait_times() {
    void* p =
        mmap(nullptr, sizeof(WaitTimes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    return new (p) WaitTimes();
}

}  // namespace

// The release comes after the waiter entered lock() (the test awaits that)
// and lock() returns after the release: the waiter was inside lock() when
// the lock became free, so what is tested is the wake-up, not a first try.
TEST_CASE("a waiter in another process gets the lock soon after release", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto held = locker.lock("handoff");
    WaitTimes* times = shared_wait_times();
    // Forked before this process has any other thread: a child forked while
    // another thread holds an allocator lock (ASan's, for one) deadlocks.
    sqlock_test::Process child = sqlock_test::Process::fork([&] {
        try {
            auto waiter = db.open();
            if (waiter.try_lock("handoff")) return 4;  // must be held
            times->entered = now_ns();
            const auto id = waiter.lock("handoff", lock_options().wait(20s)).id();
            times->returned = now_ns();
            return id > held.id() ? 0 : 2;
        } catch (...) {
            return 3;
        }
    });
    REQUIRE(eventually([&] { return times->entered != 0; }, 20s));
    const std::int64_t released = now_ns();
    held.release();
    CHECK(child.finish(30s).code == 0);
    CHECK(times->returned > released);
    munmap(times, sizeof(WaitTimes));
}

TEST_CASE("a waiter is woken by a release in the same process", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto held = locker.lock("local");
    std::atomic<std::int64_t> entered{0}, returned{0};
    std::int64_t got = 0;
    sqlock_test::ScopedThread waiter([&] {
        try {
            entered = now_ns();
            got = locker.lock("local", lock_options().wait(20s)).id();
            returned = now_ns();
        } catch (...) {
        }
    });
    REQUIRE(eventually([&] { return entered != 0; }));
    auto id = held.id();
    const std::int64_t released = now_ns();
    held.release();
    waiter.join();
    CHECK(got > id);
    CHECK(returned > released);  // inside lock() across the release
}

TEST_CASE("a waiter takes over when the holder's lease runs out", "[waiting]") {
    auto db = fresh_database();
    auto a = db.open();
    auto crashed = a.lock("lease", lock_options().expires(300ms));  // never released in time
    auto b = db.open();
    auto lock = b.lock("lease", lock_options().wait(20s));
    CHECK(lock.id() > crashed.id());
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    crashed = std::move(lock);  // the stale one's release fails quietly
    sqlock::set_release_error_handler({});
}

TEST_CASE("zero wait means try once", "[waiting]") {
    auto db = fresh_database();
    auto a = db.open();
    auto held = a.lock("once");
    auto b = db.open();
    auto start = steady::now();
    CHECK_THROWS_AS(b.lock("once", lock_options().wait(0s)), sqlock::error);
    CHECK(steady::now() - start < 5s);
}

TEST_CASE("re-entry by the holding thread fails fast unless asked for", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto outer = locker.lock("nested");
    auto start = steady::now();
    try {
        locker.lock("nested", lock_options().wait(30s));
        FAIL("must fail fast");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK(std::string(e.what()).find("already held by this thread") != std::string::npos);
    }
    CHECK(steady::now() - start < 5s);
}

TEST_CASE("re-entrant mode counts nested holds and releases on the last", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto outer = locker.lock("counted", lock_options().reentrant(true));
    {
        auto inner = locker.lock("counted", lock_options().wait(5s).reentrant(true));
        CHECK(inner.id() == outer.id());
        auto innermost = locker.try_lock("counted", lock_options().reentrant(true));
        REQUIRE(innermost);
    }
    CHECK(outer.held());
    auto observer = db.open();
    CHECK(observer.show("counted"));
    outer.release();
    CHECK_FALSE(observer.show("counted"));
}

TEST_CASE("another thread of the same process waits instead of failing", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto held = locker.lock("shared");
    std::atomic<int> got{0};
    sqlock_test::ScopedThread other([&] {
        try {
            auto l = locker.lock("shared", lock_options().wait(20s));
            got = 1;
        } catch (...) {
        }
    });
    held.release();
    other.join();
    CHECK(got == 1);
}

TEST_CASE("wait_forever waits past `wait` until the lock frees", "[waiting]") {
    auto db = fresh_database();
    auto locker = db.open();
    // Not renewed, so it frees when the lease runs out: the waiter cannot
    // get it sooner, and gets it in the end.
    auto held = locker.lock("forever", lock_options().expires(3s));
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
            auto lock = waiter.lock("forever", lock_options().wait(100ms).wait_forever(true));
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
