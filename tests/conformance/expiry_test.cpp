// Fencing tokens and the reaper's core (purge of expired rows).
#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("ids are strictly increasing and never reused", "[fencing]") {
    auto db = fresh_database();
    auto locker = db.open();
    std::int64_t last = 0;
    for (int i = 0; i < 20; ++i) {
        // The same name, released each time: the newest row is deleted before
        // the next insert, which is when a plain rowid would be reused.
        auto lock = locker.lock("fenced");
        CHECK(lock.id() > last);
        last = lock.id();
    }
    auto other = locker.lock("other-name");
    CHECK(other.id() > last);
}

TEST_CASE("purge_expired deletes only expired rows", "[purge]") {
    auto db = fresh_database();
    auto holder = db.open();
    std::vector<sqlock::Lock> short_leases;
    for (int i = 0; i < 5; ++i)
        short_leases.push_back(
            holder.lock("short-" + std::to_string(i), lock_options().expires(100ms)));
    auto keep = holder.lock("long", lock_options().expires(1h));
    auto reaper = db.open();
    REQUIRE(eventually([&] { return reaper.list_expired().size() == 5; }));
    CHECK(reaper.purge_expired() == 5);
    auto rows = reaper.list();
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].name == "long");
    CHECK(reaper.purge_expired() == 0);
    // The purged holders find out at release.
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    short_leases.clear();
    sqlock::set_release_error_handler({});
}

TEST_CASE("purge_expired works in bounded batches", "[purge][needs:counted-deletes]") {
    auto db = fresh_database();
    sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                  " (lockstring, created, expires, locked_by) VALUES "
                                  "('old-1', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-2', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-3', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-4', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-5', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}')");
    // How many rows each transaction deleted: where the dialect can, a
    // trigger logs the transaction of every deleted row in column tx of table
    // `log`; elsewhere the backend counts commits from its files.
    const sqlock_test::BackendHooks& hooks = sqlock_test::backend_context().hooks;
    const std::string log = db.table + "_deletes";
    if (hooks.delete_log_sql) sqlock_test::exec_sql(db, hooks.delete_log_sql(db.table, log));
    auto locker = db.open();
    auto live = locker.lock("live");
    const int commits_before = hooks.delete_log_sql ? 0 : hooks.committed_transactions(db.url);
    CHECK(locker.purge_expired(2) == 5);
    CHECK(locker.list().size() == 1);
    // Batches of at most 2: 2 + 2 + 1, each in its own transaction.
    if (hooks.delete_log_sql) {
        auto per_tx = sqlock_test::query(
            db, "SELECT count(*) FROM " + log + " GROUP BY tx ORDER BY count(*) DESC, tx");
        REQUIRE(per_tx.size() == 3);
        CHECK(*per_tx[0][0] == "2");
        CHECK(*per_tx[1][0] == "2");
        CHECK(*per_tx[2][0] == "1");
    } else {
        CHECK(hooks.committed_transactions(db.url) - commits_before == 3);
    }
    CHECK_THROWS_AS(locker.purge_expired(0), sqlock::error);
}
