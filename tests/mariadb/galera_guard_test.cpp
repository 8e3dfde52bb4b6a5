// The guard on Galera, from C++ (sqlock/mariadb/transaction.hpp), with the
// guarded transaction and the take-over on the same node and on different
// nodes. On one node a take-over waits for the guarded transaction, as on a
// single server; on another it does not, and the guarded transaction is
// aborted instead (certification, or the node applying the take-over),
// which sqlock::mariadb::commit() reports as errc::lost naming the lock.
// Whatever the placement, nothing of a guarded transaction commits after
// the lock was taken from it, also when the guard ran after the take-over
// had committed elsewhere but before it was applied on the guard's node.
#include <sqlock/mariadb/transaction.hpp>
#include <sqlock/sqlock.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <string>

#include "galera_cluster.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_galera::Cluster;
using sqlock_galera::query_value;
using sqlock_test::lock_options;
using sqlock_test::locker_options;
using steady = std::chrono::steady_clock;

namespace {

// A lock table and a data table of its own for one test, made through node
// 1 (DDL reaches every node before it returns).
struct Tables {
    std::string locks, data;
};

Tables fresh_tables(const Cluster& c, const std::string& tag) {
    static int counter = 0;
    const std::string base =
        "galera_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
    Tables t{base, base + "_data"};
    sqlock::Locker(c.node_url(1), locker_options().table(t.locks)).init();
    MYSQL* db = sqlock_galera::connect(c, 1);
    query_value(db, "CREATE TABLE " + t.data + " (id INT PRIMARY KEY, v INT NOT NULL)");
    query_value(db, "INSERT INTO " + t.data + " VALUES (1, 0)");
    mysql_close(db);
    return t;
}

sqlock::Locker locker_on(const Cluster& c, int node, const Tables& t) {
    return sqlock::Locker(c.node_url(node), locker_options().table(t.locks));
}

// The data row as the whole cluster has it (a causal read on `node`).
std::string value_of(const Cluster& c, int node, const Tables& t) {
    MYSQL* db = sqlock_galera::connect(c, node);
    const std::string v = query_value(
        db, "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT v FROM " + t.data + " WHERE id = 1");
    mysql_close(db);
    return v;
}

// Awaits that the row of `name` has expired as `locker`'s node has it: by
// the database's clock, which a take-over there goes by, not the client's
// (and once that node has the row at all).
void await_expired(sqlock::Locker& locker, const std::string& name) {
    INFO("awaiting the expiry of '" << name << "' on the database's clock");
    REQUIRE(sqlock_test::eventually(
        [&] {
            for (const sqlock::LockInfo& row : locker.list_expired())
                if (row.name == name) return true;
            return false;
        },
        30s));
}

// How many transactions on the node of `root` (a root session) wait for a
// row lock (InnoDB's LOCK WAIT) in a statement on `table`.
int waiting_for_a_row_lock(MYSQL* root, const std::string& table) {
    return std::stoi(query_value(root,
                                 "SELECT COUNT(*) FROM information_schema.INNODB_TRX"
                                 " WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE '%" +
                                     table + "%'"));
}

// A statement of the guarded transaction, as an application runs it: its
// error goes through sqlock::commit_failed(), which says whether the lock
// was lost.
void guarded(MYSQL* app, const std::string& sql, const sqlock::Lock& lock) {
    sqlock::mariadb::MariadbTransaction tx(app);
    try {
        tx.run(sql, {});
    } catch (const sqlock::error& e) {
        sqlock::commit_failed(e, lock);
    }
}

// What `f` throws: its category and message (a lambda that throws nothing
// fails the test).
struct Thrown {
    sqlock::errc category = sqlock::errc::backend;
    std::string what;
};

template <typename F>
Thrown thrown_by(F&& f) {
    try {
        f();
    } catch (const sqlock::error& e) {
        return {e.category(), e.what()};
    }
    FAIL("nothing thrown");
    return {};
}

// Node 1's session in a transaction guarded by `held`, which has written
// the data row: the transaction the tests take the lock from.
MYSQL* guarded_write(const Cluster& c, const Tables& t, const sqlock::Lock& held) {
    MYSQL* app = sqlock_galera::connect(c, 1);
    query_value(app, "START TRANSACTION");
    sqlock::mariadb::guard(app, held);
    query_value(app, "UPDATE " + t.data + " SET v = v + 1 WHERE id = 1");
    return app;
}

}  // namespace

TEST_CASE("on one node a take-over waits for a guarded transaction, as on a single server",
          "[galera][guard]") {
    const Cluster c;
    const Tables t = fresh_tables(c, "samenode");
    auto a = locker_on(c, 1, t), b = locker_on(c, 1, t);
    auto held = a.lock("ledger", lock_options().expires(2s).heartbeat(false));
    MYSQL* app = guarded_write(c, t, held);
    // The lease runs out with the guarded transaction open; the take-over
    // waits for it.
    auto taker = std::async(std::launch::async, [&] {
        auto lock = b.lock("ledger", lock_options().wait(30s));
        return steady::now();
    });
    // Once the row has expired by the database's clock and the take-over is
    // waiting for the guarded transaction's row lock on node 1, it has had
    // its chance: it has not returned.
    await_expired(a, "ledger");
    MYSQL* root = sqlock_galera::connect_root(c, 1);
    const bool blocked =
        sqlock_test::eventually([&] { return waiting_for_a_row_lock(root, t.locks) > 0; }, 30s);
    mysql_close(root);
    REQUIRE(blocked);
    REQUIRE(taker.wait_for(0s) == std::future_status::timeout);
    const auto committed = steady::now();
    sqlock::mariadb::commit(app, held);
    CHECK(taker.get() >= committed);
    mysql_close(app);
    CHECK(value_of(c, 2, t) == "1");
}

TEST_CASE("on another node a take-over does not wait: the guarded transaction is lost",
          "[galera][guard]") {
    const Cluster c;
    const Tables t = fresh_tables(c, "othernode");
    auto a = locker_on(c, 1, t), b = locker_on(c, 2, t);
    auto held = a.lock("ledger", lock_options().expires(2s).heartbeat(false));
    MYSQL* app = guarded_write(c, t, held);
    // The lease runs out with the guarded transaction open. Node 2 has no
    // row lock of node 1's to wait for: the take-over comes at once.
    await_expired(b, "ledger");
    const auto asked = steady::now();
    auto taken = b.lock("ledger", lock_options().wait(30s));
    CHECK(steady::now() - asked < 5s);
    CHECK(taken.id() > held.id());
    // Its write aborted the guarded transaction (at its next statement or
    // its commit): lost, naming the lock, and nothing of it committed.
    const Thrown e = thrown_by([&] {
        guarded(app, "UPDATE " + t.data + " SET v = v + 10 WHERE id = 1", held);
        sqlock::mariadb::commit(app, held);
    });
    mysql_close(app);
    CHECK(e.category == sqlock::errc::lost);
    CHECK(e.what.find("lock 'ledger' is no longer held") != std::string::npos);
    CHECK(value_of(c, 3, t) == "0");
}

TEST_CASE("a guard run after a take-over elsewhere fails as lost", "[galera][guard]") {
    const Cluster c;
    const Tables t = fresh_tables(c, "after");
    auto a = locker_on(c, 1, t), b = locker_on(c, 3, t);
    auto held = a.lock("ledger", lock_options().expires(1500ms).heartbeat(false));
    await_expired(b, "ledger");
    auto taken = b.lock("ledger", lock_options().wait(30s));
    MYSQL* app = sqlock_galera::connect(c, 1);
    query_value(app, "START TRANSACTION");
    const Thrown e = thrown_by([&] { sqlock::mariadb::guard(app, held); });
    CHECK(e.category == sqlock::errc::lost);
    CHECK(e.what.find("'ledger'") != std::string::npos);
    query_value(app, "ROLLBACK");
    mysql_close(app);
}

TEST_CASE("a guard that passes on a node behind a take-over committed elsewhere cannot commit",
          "[galera][guard]") {
    // Node 1 is kept behind the cluster for a few seconds: one applier,
    // busy with a large write from node 2, and the force-release that node
    // 2 commits right after it queued there. In that window node 1 still
    // shows the lock row, so the guard passes; the transaction's commit
    // then meets the force-release in certification and fails.
    const Cluster c;
    const sqlock_galera::Restored restored(c);
    const Tables t = fresh_tables(c, "behind");
    auto a = locker_on(c, 1, t), b = locker_on(c, 2, t);
    auto held = a.lock("ledger", lock_options().expires(60s).heartbeat(false));
    MYSQL* writer = sqlock_galera::connect(c, 2);
    query_value(writer, "CREATE TABLE " + t.data + "_filler (id INT PRIMARY KEY, pad CHAR(200))");
    query_value(writer, "SET STATEMENT max_recursive_iterations = 1000000 FOR INSERT INTO " +
                            t.data +
                            "_filler WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s"
                            " WHERE n < 150000) SELECT n, 'x' FROM s");
    MYSQL* root = sqlock_galera::connect_root(c, 1);
    const std::string threads = query_value(root, "SELECT @@GLOBAL.wsrep_slave_threads");
    query_value(root, "SET GLOBAL wsrep_slave_threads = 1");
    MYSQL* app = sqlock_galera::connect(c, 1);
    // Node 1 has the filler (a causal read), then the large write and the
    // force-release are committed on node 2.
    query_value(app,
                "SET STATEMENT wsrep_sync_wait = 1 FOR SELECT COUNT(*) FROM " + t.data + "_filler");
    query_value(writer, "UPDATE " + t.data + "_filler SET pad = 'y'");
    CHECK(b.force_release("ledger"));
    // Node 1 still shows the row: the window this test is about.
    const std::string still = query_value(
        app, "SELECT COUNT(*) FROM " + t.locks + " WHERE id = " + std::to_string(held.id()));
    query_value(app, "START TRANSACTION");
    bool passed = false;
    const Thrown e = thrown_by([&] {
        sqlock::mariadb::guard(app, held);
        passed = true;
        guarded(app, "UPDATE " + t.data + " SET v = v + 1 WHERE id = 1", held);
        sqlock::mariadb::commit(app, held);
    });
    query_value(root, "SET GLOBAL wsrep_slave_threads = " + threads);
    mysql_close(root);
    mysql_close(app);
    mysql_close(writer);
    INFO("node 1 still showed the row: " << still << "; the guard passed: " << passed);
    CHECK(still == "1");
    CHECK(passed);
    CHECK(e.category == sqlock::errc::lost);
    CHECK(e.what.find("'ledger'") != std::string::npos);
    CHECK(value_of(c, 2, t) == "0");
}
