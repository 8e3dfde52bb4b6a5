// The wait through an unavailable database (src/waiting/obstacle.hpp): when
// a waiter tries again, and what the error at its deadline keeps of the last
// obstacle and says of the wait. The availability suite proves the whole on
// real servers; these pin down the schedule and the words.
#include <catch2/catch.hpp>

#include "waiting/obstacle.hpp"

using namespace sqlock::detail;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

TEST_CASE("after an obstacle, the next try comes after a jittered backoff growing to its cap",
          "[unit][obstacle]") {
    Obstacles o(100ms, 1s);
    const auto t0 = clock_type::now();
    CHECK_FALSE(o.blocked());
    const sqlock::error refused(sqlock::errc::connection, "connection refused");
    std::vector<sqlock::duration> gaps;
    auto now = t0;
    for (int i = 0; i < 8; ++i) {
        o.met(refused, now);
        REQUIRE(o.blocked());
        gaps.push_back(std::chrono::duration_cast<sqlock::duration>(o.retry_at() - now));
        now = o.retry_at();
    }
    // [b/2, b] for b = 100 ms, 200, 400, 800, then 1 s each.
    CHECK(gaps[0] >= 50ms);
    CHECK(gaps[0] <= 100ms);
    CHECK(gaps[1] >= 100ms);
    CHECK(gaps[1] <= 200ms);
    CHECK(gaps[3] >= 400ms);
    for (std::size_t i = 4; i < gaps.size(); ++i) {
        CHECK(gaps[i] >= 500ms);
        CHECK(gaps[i] <= 1s);
    }
    // Cleared, the next spell starts from the first pause again.
    o.cleared(now);
    CHECK_FALSE(o.blocked());
    o.met(refused, now);
    CHECK(o.retry_at() - now <= 100ms);
}

TEST_CASE("the error at the deadline keeps the last obstacle's category, code and read-only",
          "[unit][obstacle]") {
    Obstacles o;
    const auto t0 = clock_type::now();
    o.met(sqlock::error(sqlock::errc::connection, "no answer [db]", "08006"), t0);
    o.cleared(t0 + 2s);
    o.met(sqlock::error::read_only_database("the server is read-only [db]", "25006"), t0 + 5s);
    CHECK(o.unavailable_for(t0 + 9s) == 6s);
    const sqlock::error e = o.give_up("lock 'x'", 10s, "gave up", t0 + 9s);
    CHECK(e.category() == sqlock::errc::configuration);
    CHECK(e.read_only());
    CHECK(e.unavailable());
    CHECK(e.backend_code() == "25006");
    CHECK(std::string(e.what()) ==
          "gave up waiting for lock 'x' after 10s: the database has been read-only for the last "
          "4s (unavailable for 6s of the wait in all, unreachable and read-only); the last "
          "attempt: the server is read-only [db]");
    Obstacles down;
    down.met(sqlock::error(sqlock::errc::connection, "refused [db]", "08001"), t0);
    const sqlock::error d = down.give_up("lock 'x'", 3s, "stopped", t0 + 3s);
    CHECK(d.category() == sqlock::errc::connection);
    CHECK_FALSE(d.read_only());
    CHECK(std::string(d.what()) ==
          "stopped waiting for lock 'x' after 3s: the database has been unavailable for the last "
          "3s; the last attempt: refused [db]");
}

TEST_CASE("only a connection failure or a read-only refusal is an obstacle", "[unit][obstacle]") {
    CHECK(sqlock::error(sqlock::errc::connection, "x").unavailable());
    CHECK(sqlock::error::read_only_database("x").unavailable());
    CHECK(sqlock::error::read_only_database("x").category() == sqlock::errc::configuration);
    for (auto c :
         {sqlock::errc::busy, sqlock::errc::timeout, sqlock::errc::lost,
          sqlock::errc::configuration, sqlock::errc::invalid_argument, sqlock::errc::backend}) {
        CHECK_FALSE(sqlock::error(c, "x").unavailable());
        CHECK_FALSE(sqlock::error(c, "x").read_only());
    }
}
