// Listing for the CLI: all rows or by prefix, with holder and expiry.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("list returns rows by name with holder and time left", "[listing]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto b = locker.lock("backup/db", lock_options().expires(30min));
    auto a = locker.lock("backup/app");
    auto c = locker.lock("cron/report");
    auto all = locker.list();
    REQUIRE(all.size() == 3);
    CHECK(all[0].name == "backup/app");
    CHECK(all[1].name == "backup/db");
    CHECK(all[2].name == "cron/report");
    CHECK(all[1].seconds_left > 1700);
    CHECK(all[1].seconds_left <= 1800);
    CHECK_FALSE(all[1].expired());
    CHECK(all[1].holder.pid == getpid());
    CHECK(sqlock::describe_holder(all[1]).find(std::to_string(getpid())) != std::string::npos);

    auto backups = locker.list("backup/");
    REQUIRE(backups.size() == 2);
    CHECK(locker.list("nothing-").empty());
}

TEST_CASE("prefixes are literal, not LIKE patterns", "[listing]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto a = locker.lock("a_b");
    auto b = locker.lock("axb");
    auto c = locker.lock("a%c");
    CHECK(locker.list("a_").size() == 1);
    CHECK(locker.list("a%").size() == 1);
}

TEST_CASE("rows written by other programs never break listing", "[listing]") {
    auto db = fresh_database();
    std::string t = db.table;
    sqlock_test::exec_sql(
        db, "INSERT INTO " + t +
                " (lockstring, created, expires, locked_by) VALUES "
                "('dbix', '2030-01-01 00:00:00', '2030-01-01 01:00:00', "
                "'{\"host\":\"old\",\"guid\":\"G\",\"pid\":42}'),"
                "('empty', '2030-01-01 00:00:00', '2030-01-01 01:00:00', ''),"
                "('broken', '2030-01-01 00:00:00', '2030-01-01 01:00:00', '{not json'),"
                "('null', '2030-01-01 00:00:00', '2030-01-01 01:00:00', NULL),"
                "('array', '2030-01-01 00:00:00', '2030-01-01 01:00:00', '[1,2]'),"
                "('pidstr', '2030-01-01 00:00:00', '2030-01-01 01:00:00', '{\"pid\":\"77\"}')");
    auto locker = db.open();
    auto rows = locker.list();
    REQUIRE(rows.size() == 6);
    for (const auto& r : rows) CHECK_FALSE(sqlock::describe_holder(r).empty());
    auto dbix = locker.show("dbix");
    REQUIRE(dbix);
    CHECK(dbix->holder.host == "old");
    CHECK(dbix->holder.pid == 42);
    CHECK(locker.show("pidstr")->holder.pid == 77);
    // Held by a foreign program: excluded like any holder; force works.
    CHECK_FALSE(locker.try_lock("dbix"));
    CHECK(locker.force_release("null"));
    CHECK(locker.purge_expired() == 0);
}

TEST_CASE("show returns nothing for an unknown name", "[listing]") {
    auto db = fresh_database();
    auto locker = db.open();
    CHECK_FALSE(locker.show("nope"));
}
