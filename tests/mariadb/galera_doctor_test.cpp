// sqlock doctor on Galera (sqlock::diagnose()): the cluster as the node it
// reached sees it, the settings that bear on locks, each host of the URL's
// list as a connection to it alone finds it, and the problems: the test
// cluster's innodb_flush_log_at_trx_commit = 2 is one.
#include <sqlock/sqlock.hpp>

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "galera_cluster.hpp"
#include "test_support.hpp"

using sqlock_galera::Cluster;

namespace {

std::map<std::string, std::string> facts_of(const sqlock::Diagnosis& d) {
    std::map<std::string, std::string> facts;
    for (const auto& f : d.facts) facts[f.key] = f.value;
    return facts;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& l : lines) out += l + "\n";
    return out;
}

}  // namespace

TEST_CASE("doctor on Galera: the cluster, its settings, each host of the list",
          "[galera][doctor]") {
    const Cluster c;
    const sqlock_galera::Restored restored(c);
    const std::string table = "doctor_" + std::to_string(getpid());
    sqlock::Locker locker(c.url_from(1), sqlock_test::locker_options().table(table));
    locker.init();
    sqlock::Diagnosis d = sqlock::diagnose(locker);
    auto facts = facts_of(d);
    INFO(joined(d.problems));
    CHECK(facts["galera cluster"].find("3 nodes in the Primary component") != std::string::npos);
    CHECK(facts["galera cluster"].find("Synced, wsrep_ready ON") != std::string::npos);
    CHECK(facts["galera settings"].find("auto_increment_increment = 3") != std::string::npos);
    CHECK(facts["galera settings"].find("wsrep_sync_wait = 0") != std::string::npos);
    CHECK(facts["galera settings"].find("innodb_flush_log_at_trx_commit = 2") != std::string::npos);
    CHECK(facts["fencing ids"].find(table + "_fencing") != std::string::npos);
    for (int n = 1; n <= 3; ++n)
        CHECK(facts["host 127.0.0.1:" + std::to_string(c.port(n))].find(
                  "ready: Galera node Synced") == 0);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("innodb_flush_log_at_trx_commit = 2") != std::string::npos);

    // A node cut from the others: named as not used, the rest as before.
    c.isolate(3, true);
    // The others see it gone once their view of the cluster changes (the
    // group's suspect timeout): awaited, not assumed.
    REQUIRE(sqlock_test::eventually(
        [&] {
            d = sqlock::diagnose(locker);
            facts = facts_of(d);
            return facts["galera cluster"].find("2 nodes") != std::string::npos;
        },
        std::chrono::seconds(30)));
    const std::string third = facts["host 127.0.0.1:" + std::to_string(c.port(3))];
    INFO(third);
    CHECK(third.find("not used: the Galera node is not ready for locks") == 0);
    CHECK(third.find("non-Primary") != std::string::npos);
    CHECK(third.find(c.password()) == std::string::npos);
    c.isolate(3, false);
}
