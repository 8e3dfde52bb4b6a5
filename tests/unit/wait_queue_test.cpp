// How often a waiter behind others looks at its place in line when nothing
// pushes it a wake-up (src/waiting/wait_queue.hpp): a handful of looks over its wait,
// however long the line, and never later than its place's renewal.
#include <catch2/catch.hpp>
#include <chrono>

#include "waiting/wait_queue.hpp"

using sqlock::detail::poll_pace;
using namespace std::chrono_literals;

TEST_CASE("a waiter's pace follows the speed its line has been seen to move", "[wait_queue]") {
    const sqlock::duration renew = 5s;
    // Not seen to move yet: a guess of 10 ms a place, two thirds of it
    // (half next to the front).
    CHECK(poll_pace(1, 0, renew) == 5ms);
    CHECK(poll_pace(3, 0, renew) == 20ms);
    // 25 places a second: next in line looks within half a hand-off.
    CHECK(poll_pace(1, 25, renew) == 20ms);
    CHECK(poll_pace(10, 25, renew) == 266ms);
    // Far back, or a line that hardly moves: at its renewal.
    CHECK(poll_pace(1000, 25, renew) == renew);
    CHECK(poll_pace(1, 0.01, renew) == renew);
}

TEST_CASE("a line of any length looks a bounded number of times per waiter", "[wait_queue]") {
    // A waiter 255 places back, the line moving 25 places a second: each
    // look cuts its distance to the front to a third.
    const sqlock::duration renew = 5s;
    double waited_ms = 0;
    int looks = 0;
    const double per_second = 25;
    for (double ahead = 255; ahead >= 1 && looks < 100; ++looks) {
        const auto pace = poll_pace(static_cast<std::int64_t>(ahead), per_second, renew);
        waited_ms += static_cast<double>(pace.count());
        ahead = 255 - waited_ms / 1000.0 * per_second;
    }
    CHECK(looks <= 12);
}
