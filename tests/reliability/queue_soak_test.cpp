// The waiting line under random link faults: several hosts take one name in
// a loop, each through a fault_relay of its own, while one link at a time
// freezes (connections stay open, packets go nowhere) for a while and
// comes back. Every lock and every place in line has the default lease
// pair: the lock's lease, and a place lease derived from it. Two things
// must hold: never two holders at once, and no host whose own link stayed
// up waits in vain, for a frozen holder stalls a name at most its lease and
// a frozen waiter at most its place's.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

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
    std::vector<Span> failed_waits;   // lock() gave up: timeout, busy or error
    std::vector<std::string> errors;  // their messages
    int acquisitions = 0;
};

}  // namespace

TEST_CASE(
    "queue: hosts in a loop under link faults never overlap, and a host that stays "
    "connected never waits in vain",
    "[fencing][queue]") {
    if (!sqlock_test::is_server_backend()) {
        // An embedded database has no link to cut; the conformance suite
        // freezes waiting processes (SIGSTOP) on it. Not a skip: the rest
        // of this suite runs on it.
        SUCCEED("no link to cut on an embedded database");
        return;
    }
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
        relays.push_back(std::make_unique<reliability::Relay>(sqlock_test::port_of(db.url)));
        lockers.push_back(std::make_unique<sqlock::Locker>(
            sqlock_test::with_port(db.url, relays.back()->port()), options));
    }

    std::vector<Host> seen(hosts);
    std::atomic<bool> stop{false};
    std::atomic<int> holding{0}, overlaps{0};
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
                    if (holding.fetch_add(1) != 0) overlaps.fetch_add(1);
                    ++me.acquisitions;
                    std::this_thread::sleep_for(50ms);  // the job
                    holding.fetch_sub(1);
                    try {
                        lock.release();
                    } catch (const sqlock::error&) {
                        // Its link froze while it held: the row lapses.
                    }
                } catch (const sqlock::error& e) {
                    me.failed_waits.push_back({asked, steady::now()});
                    me.errors.push_back(e.what());
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

    CHECK(overlaps.load() == 0);
    int acquisitions = 0;
    for (int i = 0; i < hosts; ++i) {
        const Host& h = seen[static_cast<std::size_t>(i)];
        acquisitions += h.acquisitions;
        for (std::size_t w = 0; w < h.failed_waits.size(); ++w) {
            bool cut_meanwhile = false;
            for (const Span& c : h.cuts) cut_meanwhile |= c.overlaps(h.failed_waits[w]);
            INFO("host " << i << " gave up waiting: " << h.errors[w]);
            CHECK(cut_meanwhile);
        }
    }
    // 50 ms jobs for the whole soak, less the stalls: far more than this
    // unless the line stalls for whole waits.
    CHECK(acquisitions >= 20);
}
