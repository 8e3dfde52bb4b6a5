// What the loss of a node costs, measured: a holder connected to it (its
// lease renewed through another node), a waiter connected to it (the lock
// released meanwhile reaches it through another node), and a newcomer whose
// host list starts with it (`sqlock run` as a fresh process, against the
// same run with every node up). The node is paused (SIGSTOP): it answers
// nothing, the hardest loss for a client to notice. The figures are printed
// (docs/mariadb.md quotes them); the checks are that nothing is lost and
// everyone gets through within the lease.
#include <sqlock/sqlock.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <string>

#include "galera_cluster.hpp"
#include "process.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_galera::Cluster;
using sqlock_galera::query_value;
using sqlock_test::lock_options;
using sqlock_test::locker_options;
using steady = std::chrono::steady_clock;

namespace {

long long ms(steady::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// `sqlock run NAME -- true` through the host list from node `first`: how
// long it took, and its exit code.
std::pair<long long, int> newcomer(const Cluster& c, int first, const std::string& table,
                                   const std::string& name) {
    const auto started = steady::now();
    sqlock_test::Process run(
        {SQLOCK_CLI, "--table", table, "run", name, "--expires", "8s", "--", "/bin/true"},
        {{"SQLOCK_DB", c.url_from(first)}});
    const int code = run.finish(60s).code;
    return {ms(steady::now() - started), code};
}

// The expiry of row `id` as the cluster has it, by node 2 (causal).
std::string expires_of(const Cluster& c, const std::string& table, std::int64_t id) {
    MYSQL* db = sqlock_galera::connect(c, 2);
    const std::string v =
        query_value(db,
                    "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT DATE_FORMAT(expires, "
                    "'%Y-%m-%d %H:%i:%s.%f') FROM " +
                        table + " WHERE id = " + std::to_string(id));
    mysql_close(db);
    return v;
}

}  // namespace

TEST_CASE("what a paused node costs a holder, a waiter and a newcomer", "[galera][costs]") {
    const Cluster c;
    const sqlock_galera::Restored restored(c);
    const std::string table = "costs_" + std::to_string(getpid());
    // The lease of `sqlock run` in the soak; db_timeout as `run` makes it
    // (a sixth of the lease).
    const auto lease = 8s;
    const auto options = locker_options().table(table).db_timeout(1333ms);
    sqlock::Locker(c.node_url(1), options).init();
    const auto [healthy_ms, healthy_code] = newcomer(c, 1, table, "newcomer");
    REQUIRE(healthy_code == 0);

    sqlock::Locker holder(c.url_from(1), options), waiter(c.url_from(1), options);
    auto held = holder.lock("costs", lock_options().expires(lease).heartbeat(true));
    // The waiter waits on node 1 too (its first look connects it there):
    // awaited by its place in the name's line, which it takes once refused.
    auto acquired = std::async(std::launch::async, [&] {
        auto lock = waiter.lock("costs", lock_options().wait(60s).expires(lease));
        return steady::now();
    });
    REQUIRE(sqlock_test::eventually([&] { return holder.queue_length("costs") == 1; }, 30s));
    const std::string before = expires_of(c, table, held.id());

    const auto paused = steady::now();
    c.pause(1);
    // The holder: its next renewal that lands, through another node.
    steady::time_point renewed{};
    CHECK(sqlock_test::eventually(
        [&] {
            if (expires_of(c, table, held.id()) <= before) return false;
            renewed = steady::now();
            return true;
        },
        lease));
    CHECK_FALSE(held.lost());
    // A newcomer whose list starts with the paused node.
    const auto [paused_ms, paused_code] = newcomer(c, 1, table, "newcomer");
    CHECK(paused_code == 0);
    // The waiter: the release reaches it through another node.
    const auto released = steady::now();
    held.release();
    const auto got = acquired.get();
    CHECK(got - released < lease);
    c.resume(1);
    c.restore_all();

    // The worst case for a waiter: the holder releases just as the node
    // both are connected to stops (the release, too, goes through another
    // node after its own bound). Node 3, which this process has not used
    // with a list starting there: its new connections start there.
    sqlock::Locker holder3(c.url_from(3), options), waiter3(c.url_from(3), options);
    auto again = holder3.lock("costs-2", lock_options().expires(lease).heartbeat(true));
    // The waiter keeps what it got until the release has said how it went.
    auto second = std::async(std::launch::async, [&] {
        auto lock = waiter3.lock("costs-2", lock_options().wait(60s).expires(lease));
        return std::make_pair(steady::now(), std::move(lock));
    });
    REQUIRE(sqlock_test::eventually([&] { return holder3.queue_length("costs-2") == 1; }, 30s));
    const auto stopped = steady::now();
    c.pause(3);
    // The release goes through: the waiter gets the name. Its answer may
    // not come while the cluster drops the node (errc::connection: the
    // caller may release again), and a release sent again then finds no
    // row: it reads the name's register, which says the first one went
    // through, and says released, not lost.
    std::string release_said;
    int unanswered = 0;
    for (; unanswered < 5 && release_said.empty(); ++unanswered) {
        try {
            again.release();
            release_said = "released";
        } catch (const sqlock::error& e) {
            if (e.category() == sqlock::errc::connection) continue;
            release_said = e.what();
        }
    }
    CHECK(release_said == "released");
    const auto handed = second.get().first;
    CHECK(handed - stopped < lease);
    c.resume(3);
    WARN("a node paused: the holder's lease renewed through another node "
         << ms(renewed - paused) << " ms after; the waiter had the lock " << ms(got - released)
         << " ms after its release, and " << ms(handed - stopped)
         << " ms after the node stopped when the release came with the stop (the release: "
         << release_said << ", after " << unanswered - 1
         << " unanswered); a newcomer's "
            "sqlock run took "
         << paused_ms << " ms (" << healthy_ms << " ms with every node up); lease " << ms(lease)
         << " ms, db_timeout 1333 ms");
}
