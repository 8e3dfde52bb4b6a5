// A release on Galera whose answer never came: its node ran the DELETE and
// the relay in front of that node kept the answer back, so the pool sent the
// release again on a fresh connection, after another holder had taken the
// name and let it go. The row is gone and the register names the newer
// holder's release, yet the lease still runs: on a cluster that keeps every
// acknowledged commit only a delete can have removed the row, never a
// take-over, so the release says released (src/held/held_claim.cpp).
#include <sqlock/sqlock.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "galera_cluster.hpp"
#include "relay.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_galera::Cluster;
using steady = std::chrono::steady_clock;

TEST_CASE(
    "a release whose answer was lost, sent again after another holder came and went, "
    "says released on Galera",
    "[galera][release]") {
    const Cluster c;
    const sqlock_galera::Restored restored(c);
    const std::string table = "release_" + std::to_string(getpid());
    reliability::Relay relay(c.node_url(1));
    sqlock::LockerOptions through_relay = sqlock_test::locker_options().table(table);
    through_relay.db_timeout = 5s;  // how long the first try waits for its answer
    sqlock::Locker holder(relay.url(), through_relay);
    holder.init();
    sqlock::Locker other(c.node_url(2), sqlock_test::locker_options().table(table));

    sqlock::LockOptions lease;
    lease.expires = 120s;
    auto lock = holder.try_lock("handed-on", lease);
    REQUIRE(lock);
    relay.command("hold-reply");

    const auto release_sent = steady::now();
    std::string outcome;
    sqlock_test::ScopedThread releasing([&] {
        try {
            lock->release();
            outcome = "released";
        } catch (const sqlock::error& e) {
            outcome = std::string(sqlock::to_string(e.category())) + ": " + e.what();
        }
    });
    // The DELETE ran on node 1; node 2 sees the name free once it applied it.
    REQUIRE(sqlock_test::eventually([&] { return !other.show("handed-on"); }, 4s));
    {
        auto next = other.try_lock("handed-on");
        REQUIRE(next);
        next->release();
    }
    const auto other_done = steady::now();
    releasing.join();
    INFO("the release: " << outcome);
    // The other holder came and went before the first try gave up, so the
    // second try found the register past our id.
    CHECK(other_done - release_sent < through_relay.db_timeout);
    const auto asked = relay.held();
    REQUIRE(asked);
    CHECK(asked->find("DELETE") != std::string::npos);
    CHECK(outcome == "released");
    CHECK_FALSE(lock->lost());
}
