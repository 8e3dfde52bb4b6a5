// The waiting line under random link faults: several hosts take one name in
// a loop, each through a fault_relay of its own, while one link at a time
// freezes (connections stay open, packets go nowhere) for a while and
// comes back. Every lock and every place in line has the default lease
// pair: the lock's lease, and a place lease derived from it. Two things
// must hold: never two holders at once, and no host whose own link stayed
// up waits in vain, for a frozen holder stalls a name at most its lease and
// a frozen waiter at most its place's.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cut_off.hpp"
#include "relay.hpp"
#include "reliability_support.hpp"
#include "server_url.hpp"

using namespace std::chrono_literals;

namespace {

using steady = std::chrono::steady_clock;

// A span of steady time: a wait, or a frozen link.
struct Span {
    steady::time_point from, to;
    bool overlaps(const Span& other) const { return from <= other.to && other.from <= to; }
};

// What one host saw, written by its thread, read once every thread ended.
struct Host {
    std::vector<Span> cuts;           // its link frozen (by the test's thread)
    std::vector<Span> holds;          // from lock()'s return to the job's end
    std::vector<Span> failed_waits;   // lock() ran out of time: timeout
    std::vector<std::string> errors;  // their messages
};

}  // namespace

TEST_CASE(
    "queue: hosts in a loop under link faults never overlap, and a host that stays "
    "connected never waits in vain",
    "[fencing][queue][needs:server]") {
    // An embedded database has no link to cut; the conformance suite
    // freezes waiting processes (SIGSTOP) on it.
    constexpr int hosts = 4;
    constexpr auto lease = 2s;  // each lock's, and so each place's
    // Longer than any stall one fault may cause: the fault itself (at most
    // 5 s, during which a statement sent before it may wait in the relay),
    // then a row or a place written by that statement, which lapses within
    // its lease, and the hand-offs after it. A place that outlived its
    // waiter's lock() by a 15 s lease, as before places took the lock's
    // lease, made the others wait in vain.
    constexpr auto wait = 10s;
    const auto soak = std::chrono::seconds(reliability::env_long("SQLOCK_QUEUE_SOAK_SECONDS", 30));

    auto db = sqlock_test::fresh_database();
    std::vector<std::unique_ptr<reliability::Relay>> relays;
    std::vector<std::unique_ptr<sqlock::Locker>> lockers;
    sqlock::LockerOptions options;
    options.table = db.table;
    options.db_timeout = 2s;  // a call on a frozen link gives up, as a job's would
    for (int i = 0; i < hosts; ++i) {
        relays.push_back(std::make_unique<reliability::Relay>(db.url));
        lockers.push_back(std::make_unique<sqlock::Locker>(relays.back()->url(), options));
    }

    std::vector<Host> seen(hosts);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < hosts; ++i) {
        threads.emplace_back([&, i] {
            Host& me = seen[static_cast<std::size_t>(i)];
            while (!stop.load()) {
                const auto asked = steady::now();
                try {
                    sqlock::LockOptions o;
                    o.expires = lease;
                    o.wait = wait;
                    sqlock::Lock lock = lockers[static_cast<std::size_t>(i)]->lock("soak", o);
                    // The job: 50 ms, stopped by valid_until() as the
                    // library asks (an acquisition slowed by a freezing
                    // link may leave less), and counted only up to it: a
                    // thread the machine let oversleep has overrun its
                    // own lock, which is not a second holder.
                    const Span hold{steady::now(), {}};
                    std::this_thread::sleep_until(std::min(hold.from + 50ms, lock.valid_until()));
                    me.holds.push_back({hold.from, std::min(steady::now(), lock.valid_until())});
                    try {
                        lock.release();
                    } catch (const sqlock::error&) {
                        // Its link froze while it held: the row lapses.
                    }
                } catch (const sqlock::error& e) {
                    // A connection error is the fault's own doing (or a
                    // reconnect after it that a loaded machine was slow to
                    // accept); a wait that ran out is what must not happen.
                    if (e.category() == sqlock::errc::timeout ||
                        e.category() == sqlock::errc::busy) {
                        me.failed_waits.push_back({asked, steady::now()});
                        me.errors.push_back(e.what());
                    }
                }
            }
        });
    }

    // One link at a time, frozen for 1-5 s (its calls give up after 2 s, a
    // reconnect after 2 s more), then 3 s or more with every link up, in
    // which the line moves.
    std::mt19937 rng(std::random_device{}());
    const auto until = steady::now() + soak;
    while (steady::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(3000 + rng() % 1000));
        const std::size_t victim = rng() % hosts;
        const auto frozen = std::chrono::milliseconds(1000 + rng() % 4000);
        Span cut{steady::now(), {}};
        relays[victim]->command("freeze");
        std::this_thread::sleep_for(frozen);
        relays[victim]->command("pass");
        cut.to = steady::now();
        seen[victim].cuts.push_back(cut);
    }
    stop = true;
    for (auto& t : threads) t.join();

    // Never two holders: no two holds overlap, in the order they began.
    std::vector<Span> holds;
    for (const Host& h : seen) holds.insert(holds.end(), h.holds.begin(), h.holds.end());
    std::sort(holds.begin(), holds.end(),
              [](const Span& a, const Span& b) { return a.from < b.from; });
    int overlaps = 0;
    for (std::size_t k = 1; k < holds.size(); ++k)
        if (holds[k].from < holds[k - 1].to) ++overlaps;
    CHECK(overlaps == 0);
    const auto acquisitions = holds.size();
    for (int i = 0; i < hosts; ++i) {
        const Host& h = seen[static_cast<std::size_t>(i)];
        for (std::size_t w = 0; w < h.failed_waits.size(); ++w) {
            bool cut_meanwhile = false;
            for (const Span& c : h.cuts) cut_meanwhile |= c.overlaps(h.failed_waits[w]);
            INFO("host " << i << " gave up waiting: " << h.errors[w]);
            CHECK(cut_meanwhile);
        }
    }
    // 50 ms jobs for the whole soak, less the stalls: far more than this
    // unless the line stalls for whole waits.
    CHECK(acquisitions >= 20u);
}
