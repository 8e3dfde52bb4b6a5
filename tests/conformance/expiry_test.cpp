// Fencing tokens and the reaper's core (purge of expired rows).
#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <iterator>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;

namespace {

// Committed write transactions recorded in a SQLite WAL file: frames of the
// WAL's current generation (salts equal to the header's) whose "database size
// after commit" field is set. Valid while nothing checkpoints the WAL (a test
// database stays far below the 1000-page auto-checkpoint).
int wal_commits(const sqlock_test::Database& db) {
    const std::string path = db.url.substr(std::string("sqlite://").size()) + "-wal";
    std::ifstream in(path, std::ios::binary);
    const std::string wal((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<std::uint8_t>(wal[at + i]);
        return v;
    };
    if (wal.size() < 32) return 0;
    const std::uint32_t page = be32(8), salt1 = be32(16), salt2 = be32(20);
    int commits = 0;
    for (std::size_t at = 32; at + 24 + page <= wal.size(); at += 24 + page)
        if (be32(at + 8) == salt1 && be32(at + 12) == salt2 && be32(at + 4) != 0) ++commits;
    return commits;
}

}  // namespace

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
        short_leases.push_back(holder.lock("short-" + std::to_string(i), {.expires = 100ms}));
    auto keep = holder.lock("long", {.expires = 1h});
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

TEST_CASE("purge_expired works in bounded batches", "[purge]") {
    auto db = fresh_database();
    sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                  " (lockstring, created, expires, locked_by) VALUES "
                                  "('old-1', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-2', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-3', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-4', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}'),"
                                  "('old-5', '2000-01-01 00:00:00', '2000-01-01 00:00:01', '{}')");
    // How many rows each transaction deleted: on a server a trigger logs the
    // transaction of every deleted row in column tx of table `log`; on SQLite
    // the WAL counts commits.
    const bool server = sqlock_test::is_server_backend();
    const std::string log = db.table + "_deletes";
    if (sqlock_test::backend() == "postgres")
        sqlock_test::exec_sql(
            db, "CREATE TABLE " + log + " (tx bigint); CREATE FUNCTION " + log +
                    "_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO " + log +
                    " VALUES (txid_current()); RETURN OLD; END$$; CREATE TRIGGER " + log +
                    "_t AFTER DELETE ON " + db.table + " FOR EACH ROW EXECUTE FUNCTION " + log +
                    "_f()");
    // MariaDB has no txid_current(); a system-versioned table with
    // transaction-precise history stores the inserting transaction's id in its
    // ROW START column.
    if (sqlock_test::backend() == "mariadb")
        sqlock_test::exec_sql(
            db, "CREATE TABLE " + log +
                    " (lockstring varchar(128),"
                    " tx bigint unsigned GENERATED ALWAYS AS ROW START INVISIBLE,"
                    " tx_end bigint unsigned GENERATED ALWAYS AS ROW END INVISIBLE,"
                    " PERIOD FOR SYSTEM_TIME (tx, tx_end)) WITH SYSTEM VERSIONING;"
                    " CREATE TRIGGER " +
                    log + "_t AFTER DELETE ON " + db.table + " FOR EACH ROW INSERT INTO " + log +
                    " (lockstring) VALUES (OLD.lockstring)");
    auto locker = db.open();
    auto live = locker.lock("live");
    const int commits_before = server ? 0 : wal_commits(db);
    CHECK(locker.purge_expired(2) == 5);
    CHECK(locker.list().size() == 1);
    // Batches of at most 2: 2 + 2 + 1, each in its own transaction.
    if (server) {
        auto per_tx = sqlock_test::query(
            db, "SELECT count(*) FROM " + log + " GROUP BY tx ORDER BY count(*) DESC, tx");
        REQUIRE(per_tx.size() == 3);
        CHECK(*per_tx[0][0] == "2");
        CHECK(*per_tx[1][0] == "2");
        CHECK(*per_tx[2][0] == "1");
    } else {
        CHECK(wal_commits(db) - commits_before == 3);
    }
    CHECK_THROWS_AS(locker.purge_expired(0), sqlock::error);
}
