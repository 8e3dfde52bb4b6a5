// The queue of waiters under a cut link: the first in line reaches the
// server through a fault_relay that freezes (connections stay open, packets
// go nowhere), so it can neither take the name nor leave the line, nor be
// told of the release. The waiter behind it must get the name once the cut
// waiter's place has lapsed, not later, and never while anyone else holds it.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "cut_off.hpp"
#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

using steady = std::chrono::steady_clock;

// One waiter's outcome, written by its thread, read by the test's.
struct Waiter {
    std::atomic<bool> done{false};
    std::atomic<bool> got{false};
    std::atomic<std::int64_t> got_at{0};  // steady ns
};

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(steady::now().time_since_epoch())
        .count();
}

// Waits for "line" with `locker` for a lock of lease `expires` (its place
// in line has the default lease, derived from it), holds it 200 ms,
// counting holders.
void wait_and_hold(sqlock::Locker& locker, std::chrono::milliseconds expires, Waiter& w,
                   std::atomic<int>& holders, std::atomic<int>& overlaps) {
    try {
        sqlock::LockOptions o;
        o.expires = expires;
        o.wait = 30s;
        sqlock::Lock lock = locker.lock("line", o);
        w.got_at = steady_ns();
        w.got = true;
        if (holders.fetch_add(1) != 0) overlaps.fetch_add(1);
        std::this_thread::sleep_for(200ms);
        holders.fetch_sub(1);
        lock.release();
    } catch (const sqlock::error&) {
        // The cut waiter's wait may fail on its frozen connection: allowed.
    }
    w.done = true;
}

}  // namespace

TEST_CASE(
    "queue: a waiter cut off at the head of the line stalls it no longer than its lock's "
    "lease",
    "[fencing][queue][needs:server][needs:cut-off]") {
    // An embedded database has no link to cut: cutting one waiter off
    // is a write lock held, which stalls every waiter alike. The
    // conformance suite freezes a waiting process (SIGSTOP) instead.
    auto db = sqlock_test::fresh_database();
    reliability::CutOff cut;
    cut.prepare(db.url);
    sqlock::Locker observer = db.open();
    // The cut waiter's calls give up after 2 s, so that its thread ends.
    sqlock::Locker cut_locker(cut.url, locker_options().table(db.table).db_timeout(2s));
    sqlock::Locker behind_locker = db.open();

    sqlock::Lock held = observer.lock("line", lock_options().expires(60s));
    std::atomic<int> holders{0}, overlaps{0};
    Waiter first, second;
    // The cut waiter's lock lease, and so its place's (the default).
    constexpr auto lease = 1s;
    sqlock_test::ScopedThread t1(
        [&] { wait_and_hold(cut_locker, lease, first, holders, overlaps); });
    REQUIRE(eventually([&] { return observer.queue_length("line") == 1; }, 10s));
    sqlock_test::ScopedThread t2(
        [&] { wait_and_hold(behind_locker, 30s, second, holders, overlaps); });
    REQUIRE(eventually([&] { return observer.queue_length("line") == 2; }, 10s));

    cut.apply();
    const auto released = steady::now();
    held.release();
    REQUIRE(eventually([&] { return second.done.load(); }, 30s));
    cut.undo();
    t1.join();
    t2.join();

    CHECK(second.got.load());
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(second.got_at.load()) - released.time_since_epoch());
    INFO("the waiter behind got the name " << waited.count() << " ms after the release");
    // The cut waiter's place lapses at most its lease after its last
    // renewal; the waiter behind looks then (and not only at its own
    // renewal, 5 s apart with its 15 s place lease).
    CHECK(waited < lease + 1500ms);
    CHECK(overlaps.load() == 0);
    // The cut waiter's place, if its wait failed, lapses within its lease.
    CHECK(eventually([&] { return observer.queue_length("line") == 0; }, 10s));
}
