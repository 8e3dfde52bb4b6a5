// A leader watcher cut off from its database (a fault_relay that freezes:
// connections stay open, packets go nowhere) says so, and once the link
// passes again reports the state it finds, even one that changed while it
// was cut off.
#include <catch2/catch.hpp>
#include <chrono>

#include "cut_off.hpp"
#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::locker_options;

namespace {

sqlock::LeaderEvent next_event(sqlock::LeaderWatch& watch, sqlock::duration bound) {
    auto e = watch.next(bound);
    REQUIRE(e);
    return *e;
}

}  // namespace

TEST_CASE("leader watch: cut off, it says so, and reports what it finds back",
          "[fencing][leader][needs:server][needs:cut-off]") {
    // An embedded database's readers are never cut off (WAL readers do
    // not wait for the write lock).
    auto db = sqlock_test::fresh_database();
    reliability::CutOff cut;
    cut.prepare(db.url);
    sqlock::Locker watching(cut.url, locker_options().table(db.table).db_timeout(1s));
    sqlock::Locker candidates = db.open();
    sqlock::ObserveOptions o;
    o.poll = 50ms;
    auto watch = sqlock::Election(watching, "cut-lead").observe(o);
    CHECK(next_event(watch, 10s).kind == sqlock::leader_event::vacant);
    sqlock::LockOptions lease;
    lease.expires = 60s;
    auto first = sqlock::Election(candidates, "cut-lead").campaign("one", lease);
    const sqlock::LeaderEvent led = next_event(watch, 10s);
    REQUIRE(led.leader);
    CHECK(led.leader->lock.id == first.id());

    cut.apply();
    // Pushed watchers check their link every 5 s; a read gives up after the
    // db_timeout of 1 s.
    const auto cut_at = std::chrono::steady_clock::now();
    const sqlock::LeaderEvent lost = next_event(watch, 15s);
    CHECK(lost.kind == sqlock::leader_event::disconnected);
    CHECK_FALSE(lost.error.empty());
    INFO("told " << std::chrono::duration<double>(std::chrono::steady_clock::now() - cut_at).count()
                 << " s after the cut");
    CHECK(std::chrono::steady_clock::now() - cut_at < 7s);
    // Said once, however long the cut lasts.
    CHECK_FALSE(watch.next(2500ms));

    // Meanwhile the leader changes.
    first.resign();
    auto second = sqlock::Election(candidates, "cut-lead").campaign("two", lease);
    cut.undo();
    const sqlock::LeaderEvent back = next_event(watch, 15s);
    CHECK(back.kind == sqlock::leader_event::leader);
    REQUIRE(back.leader);
    CHECK(back.leader->lock.id == second.id());
    CHECK(back.leader->value == "two");
    // And it watches on: a new value is pushed or polled as before.
    second.proclaim("three");
    const sqlock::LeaderEvent value = next_event(watch, 10s);
    CHECK(value.kind == sqlock::leader_event::value);
    CHECK(value.leader->value == "three");
}
