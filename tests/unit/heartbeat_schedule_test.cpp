// The heartbeat's schedule (src/held/heartbeat.hpp): how often a held lock is
// renewed, how soon a failed renewal is retried, how long one attempt may
// take, and what "valid until" a renewal earns. The fencing trials prove the
// whole under faults; these pin down the arithmetic they rely on.
#include <catch2/catch.hpp>

#include "held/heartbeat.hpp"

using namespace sqlock::detail;
using namespace std::chrono_literals;

TEST_CASE("a lease is renewed every sixth of it, retried every third of that",
          "[unit][heartbeat]") {
    const auto s = Heartbeat::settings_for(60s, 10s, 5s);
    CHECK(s.lease == 60s);
    CHECK(s.interval == 10s);
    CHECK(s.retry == std::chrono::duration_cast<sqlock::duration>(10s) / 3);
    CHECK(s.attempt_timeout == 10s);
    CHECK(s.warn_before == 5s);
}

TEST_CASE("one renewal attempt is bounded by the interval and by db_timeout", "[unit][heartbeat]") {
    CHECK(Heartbeat::settings_for(1h, 10s, 0s).attempt_timeout == 10s);  // db_timeout
    CHECK(Heartbeat::settings_for(6s, 10s, 0s).attempt_timeout == 1s);   // the interval
}

TEST_CASE("the shortest leases still renew and retry", "[unit][heartbeat]") {
    const auto s = Heartbeat::settings_for(sqlock::duration(1), 10s, 0s);
    CHECK(s.interval > sqlock::duration::zero());
    CHECK(s.retry > sqlock::duration::zero());
}

TEST_CASE("a lock is valid for its lease from when the winning statement was sent",
          "[unit][heartbeat]") {
    Validity v;
    const auto t0 = Validity::clock::now();
    v.granted(t0, 30s);
    CHECK(v.until() == t0 + 30s);
    v.granted(t0 + 10s, 30s);
    CHECK(v.until() == t0 + 40s);
}

TEST_CASE("an answer to an earlier renewal never shortens a later one's validity",
          "[unit][heartbeat]") {
    Validity v;
    const auto t0 = Validity::clock::now();
    v.granted(t0 + 10s, 30s);
    v.granted(t0, 30s);  // sent first, answered last
    CHECK(v.until() == t0 + 40s);
}
