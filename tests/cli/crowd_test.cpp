// A crowd of waiting `sqlock run` processes on one name: every one runs its
// job, in the order it started to wait. Hidden from the regular runs
// ("[.crowd]"): registered on its own for PostgreSQL, directly and through
// PgBouncer (cli_crowd.*, RUN_SERIAL), since it counts on the server's
// connections.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using namespace std::chrono_literals;
using namespace cli_test;

TEST_CASE("256 waiting sqlock runs on one name all run their job, in arrival order", "[.crowd]") {
    // SQLOCK_TEST_CROWD: another size, to measure how the drain scales.
    const char* size = std::getenv("SQLOCK_TEST_CROWD");
    const int crowd = size ? std::atoi(size) : 256;
    auto cli = fresh_cli();
    auto locker = cli.db.open();
    auto held = locker.lock("crowd", {.expires = 10min});
    const std::string log = make_dir() + "/order";
    std::vector<Process> waiters;
    waiters.reserve(crowd);
    const auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < crowd; ++i) {
        waiters.push_back(cli.start({"run", "crowd", "--wait", "600s", "--quiet", "--", "/bin/sh",
                                     "-c", "echo \"$0\" >> " + log, std::to_string(i)}));
        // In line before the next one starts: the arrival order is known.
        REQUIRE(sqlock_test::eventually(
            [&] { return locker.queue_length("crowd") == static_cast<std::size_t>(i + 1); }, 60s));
    }
    const auto queued = std::chrono::steady_clock::now();
    held.release();
    for (auto& w : waiters) {
        const Result r = w.wait(300s);
        CHECK(r.code == 0);
        if (r.code != 0) INFO(r.err);
    }
    const auto done = std::chrono::steady_clock::now();
    std::ifstream in(log);
    std::vector<int> order;
    for (int i; in >> i;) order.push_back(i);
    std::vector<int> expected;
    for (int i = 0; i < crowd; ++i) expected.push_back(i);
    CHECK(order == expected);
    CHECK(locker.queue_length("crowd") == 0);
    using ms = std::chrono::milliseconds;
    WARN("queued " << crowd << " in " << std::chrono::duration_cast<ms>(queued - started).count()
                   << " ms; all ran in " << std::chrono::duration_cast<ms>(done - queued).count()
                   << " ms");
}
