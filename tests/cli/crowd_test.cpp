// A crowd of waiting `sqlock run` processes on one name: every one runs its
// job, in the order it joined the line. Hidden from the regular runs
// ("[.crowd]"): registered on its own for PostgreSQL, directly and through
// PgBouncer (cli_crowd.*, RUN_SERIAL), since it counts on the server's
// connections.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_harness.hpp"

using namespace std::chrono_literals;
using namespace cli_test;
using sqlock_test::lock_options;

TEST_CASE("a crowd of waiting sqlock runs on one name all run their job, in arrival order",
          "[.crowd]") {
    // 256 waiters, or SQLOCK_TEST_CROWD.
    const char* size = std::getenv("SQLOCK_TEST_CROWD");
    const int crowd = size ? std::atoi(size) : 256;
    auto cli = fresh_cli();
    auto locker = cli.db.open();
    auto held = locker.lock("crowd", lock_options().expires(10min));
    const std::string log = make_dir() + "/order";
    std::vector<Process> waiters;
    waiters.reserve(crowd);
    const auto started = std::chrono::steady_clock::now();
    // In batches, each one in line before the next starts: a line that does
    // not move is polled by every waiter in it, so it is kept short-lived.
    // Within a batch the server's tickets say who arrived first.
    constexpr int batch = 32;
    for (int first = 0; first < crowd; first += batch) {
        const int last = std::min(crowd, first + batch);
        for (int i = first; i < last; ++i)
            waiters.push_back(
                cli.start({"run", "crowd", "--wait", "600s", "--quiet", "--", "/bin/sh", "-c",
                           "echo \"$0\" >> " + log, std::to_string(i)}));
        REQUIRE(sqlock_test::eventually(
            [&] { return locker.queue_length("crowd") == static_cast<std::size_t>(last); }, 300s));
    }
    const auto queued = std::chrono::steady_clock::now();
    // The arrival order: the waiters' process ids in ticket order.
    std::map<long, int> index_of_pid;
    for (int i = 0; i < crowd; ++i) index_of_pid[waiters[i].pid()] = i;
    std::vector<int> arrival;
    for (const auto& row :
         sqlock_test::query(cli.db, "SELECT waiter FROM " + cli.db.table + "_queue ORDER BY id")) {
        const auto holder = nlohmann::json::parse(row.at(0).value_or("{}"));
        arrival.push_back(index_of_pid.at(holder.at("pid").get<long>()));
    }
    REQUIRE(arrival.size() == static_cast<std::size_t>(crowd));
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
    CHECK(order == arrival);
    CHECK(locker.queue_length("crowd") == 0);
    using ms = std::chrono::milliseconds;
    WARN("queued " << crowd << " in " << std::chrono::duration_cast<ms>(queued - started).count()
                   << " ms; all ran in " << std::chrono::duration_cast<ms>(done - queued).count()
                   << " ms");
}
