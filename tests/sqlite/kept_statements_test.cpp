// The sqlite3* adapter with its statements kept (sqlock/sqlite/transaction.hpp):
// the guard's statement compiled once for the connection, and still the same
// guard: a lock not held fails it, naming the lock, whatever ran before on
// the kept statement; the handle closes once the adapter is gone.
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/sqlite/transaction.hpp"
#include "test_support.hpp"

using sqlock::sqlite::SqliteTransaction;
using sqlock::sqlite::statements;
using sqlock_test::category_of;
using sqlock_test::locker_options;

namespace {

// The application's own handle on the file: opened, and closed by the test
// itself (the close is what some tests are about).
sqlite3* open_handle(const std::string& path) {
    sqlite3* h = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            nullptr) == SQLITE_OK);
    sqlite3_busy_timeout(h, 10000);
    return h;
}

void exec(sqlite3* h, const std::string& sql) {
    INFO(sql);
    REQUIRE(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
}

// The statements prepared on the handle now.
int prepared_on(sqlite3* h) {
    int n = 0;
    for (sqlite3_stmt* s = sqlite3_next_stmt(h, nullptr); s; s = sqlite3_next_stmt(h, s)) ++n;
    return n;
}

std::string count_of(sqlite3* h, const std::string& table) {
    SqliteTransaction reader(h);
    return reader.run("SELECT count(*) FROM " + table, {}).at(0).at(0).value_or("NULL");
}

std::string scratch_file(const std::string& name) {
    return sqlock_test::scratch_dir() + "/" + name;
}

}  // namespace

TEST_CASE("a kept guard statement guards transaction after transaction, and refuses a lock lost",
          "[sqlite][guard]") {
    const std::string path = scratch_file("kept-guard.db");
    sqlock::Locker first("sqlite://" + path);
    first.init();
    sqlock::Locker second("sqlite://" + path);
    sqlite3* h = open_handle(path);
    exec(h, "CREATE TABLE data (who TEXT)");
    {
        SqliteTransaction tx(h, statements::kept);
        auto stale = first.lock("ledger");
        for (int i = 0; i < 3; ++i) {
            exec(h, "BEGIN IMMEDIATE");
            sqlock::guard(tx, stale);
            exec(h, "INSERT INTO data VALUES ('first')");
            exec(h, "COMMIT");
        }
        CHECK(prepared_on(h) == 1);  // compiled once for the three

        // Taken from it: the kept statement, run with its values again,
        // fails naming the lock, and the transaction rolls back.
        REQUIRE(second.force_release("ledger"));
        auto current = second.lock("ledger");
        exec(h, "BEGIN IMMEDIATE");
        exec(h, "INSERT INTO data VALUES ('first, after the take-over')");
        try {
            sqlock::guard(tx, stale);
            FAIL("the kept guard of a lock taken over passed");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::lost);
            CHECK(std::string(e.what()).find("'ledger'") != std::string::npos);
        }
        exec(h, "ROLLBACK");
        CHECK(count_of(h, "data") == "3");

        // The same statement passes for the holder now.
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(tx, current);
        exec(h, "INSERT INTO data VALUES ('second')");
        exec(h, "COMMIT");
        CHECK(count_of(h, "data") == "4");
        CHECK(prepared_on(h) == 1);
    }
    CHECK(prepared_on(h) == 0);
    CHECK(sqlite3_close(h) == SQLITE_OK);
}

TEST_CASE("a kept guard statement whose view was dropped says so, and works again after init",
          "[sqlite][guard]") {
    const std::string path = scratch_file("kept-dropped.db");
    sqlock::Locker locker("sqlite://" + path);
    locker.init();
    auto lock = locker.lock("ledger");
    sqlite3* h = open_handle(path);
    {
        SqliteTransaction tx(h, statements::kept);
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(tx, lock);
        exec(h, "COMMIT");

        // Another connection changes the schema under the kept statement.
        sqlite3* other = open_handle(path);
        exec(other, "DROP VIEW sqlock_locks_guard");
        exec(h, "BEGIN IMMEDIATE");
        CHECK(category_of([&] { sqlock::guard(tx, lock); }) == sqlock::errc::configuration);
        exec(h, "ROLLBACK");

        locker.init();
        exec(h, "BEGIN IMMEDIATE");
        CHECK_NOTHROW(sqlock::guard(tx, lock));
        exec(h, "COMMIT");
        CHECK(sqlite3_close(other) == SQLITE_OK);
    }
    CHECK(sqlite3_close(h) == SQLITE_OK);
}

TEST_CASE("a kept adapter keeps one statement per text, at most kept_limit", "[sqlite][guard]") {
    const std::string path = scratch_file("kept-texts.db");
    sqlock::Locker ours("sqlite://" + path);
    ours.init();
    sqlock::Locker others("sqlite://" + path, locker_options().table("other_locks"));
    others.init();
    auto a = ours.lock("ledger");
    auto b = others.lock("ledger");
    auto c = ours.lock("other");
    sqlite3* h = open_handle(path);
    {
        SqliteTransaction tx(h, statements::kept);
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(tx, a);
        sqlock::guard(tx, b);  // another table: another statement
        sqlock::guard(tx, a);
        CHECK(prepared_on(h) == 2);
        // Each run checks its own lock's row in its own table.
        CHECK_NOTHROW(sqlock::guard(tx, c));
        CHECK_NOTHROW(sqlock::guard(tx, b));
        exec(h, "COMMIT");
        CHECK(prepared_on(h) == 2);

        // One lock of the table cleared: the statement the other still
        // passes refuses it.
        REQUIRE(ours.force_release("other"));
        exec(h, "BEGIN IMMEDIATE");
        CHECK_NOTHROW(sqlock::guard(tx, a));
        CHECK(category_of([&] { sqlock::guard(tx, c); }) == sqlock::errc::lost);
        exec(h, "ROLLBACK");
        CHECK(prepared_on(h) == 2);

        for (int i = 0; i < 20; ++i) tx.run("SELECT " + std::to_string(i), {});
        CHECK(prepared_on(h) == static_cast<int>(SqliteTransaction::kept_limit));
    }
    CHECK(prepared_on(h) == 0);
    CHECK(sqlite3_close(h) == SQLITE_OK);
}

TEST_CASE("a handle closes only once its kept statements are finalized", "[sqlite][guard]") {
    const std::string path = scratch_file("kept-close.db");
    sqlock::Locker locker("sqlite://" + path);
    locker.init();
    auto lock = locker.lock("ledger");
    sqlite3* h = open_handle(path);

    SECTION("compiled each time: nothing is left on the handle") {
        SqliteTransaction tx(h);
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(tx, lock);
        exec(h, "COMMIT");
        CHECK(prepared_on(h) == 0);
        CHECK(sqlite3_close(h) == SQLITE_OK);
    }
    SECTION("kept: sqlite3_close refuses while the adapter lives") {
        auto tx = std::make_unique<SqliteTransaction>(h, statements::kept);
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(*tx, lock);
        exec(h, "COMMIT");
        CHECK(sqlite3_close(h) == SQLITE_BUSY);
        tx.reset();
        CHECK(sqlite3_close(h) == SQLITE_OK);
    }
}

TEST_CASE("a kept adapter moved hands its statements over, finalized once", "[sqlite][guard]") {
    const std::string path = scratch_file("kept-moved.db");
    sqlock::Locker locker("sqlite://" + path);
    locker.init();
    auto lock = locker.lock("ledger");
    sqlite3* h = open_handle(path);
    {
        SqliteTransaction first(h, statements::kept);
        exec(h, "BEGIN IMMEDIATE");
        sqlock::guard(first, lock);
        exec(h, "COMMIT");

        std::vector<SqliteTransaction> kept_beside;  // as a program stores it
        kept_beside.push_back(std::move(first));
        kept_beside.reserve(4);  // moved again, inside the vector
        CHECK(prepared_on(h) == 1);
        exec(h, "BEGIN IMMEDIATE");
        CHECK(category_of([&] { sqlock::guard(first, lock); }) == sqlock::errc::invalid_argument);
        CHECK(category_of([&] { first.run("SELECT 1", {}); }) == sqlock::errc::invalid_argument);
        sqlock::guard(kept_beside.front(), lock);  // the same statement, not a new one
        CHECK(prepared_on(h) == 1);

        // The guard still refuses a lock taken from it, and a lock moved
        // to another object still guards under its new name.
        sqlock::Lock moved = std::move(lock);
        CHECK(category_of([&] { sqlock::guard(kept_beside.front(), lock); }) ==
              sqlock::errc::invalid_argument);
        CHECK_NOTHROW(sqlock::guard(kept_beside.front(), moved));
        exec(h, "COMMIT");
        REQUIRE(locker.force_release("ledger"));
        exec(h, "BEGIN IMMEDIATE");
        CHECK(category_of([&] { sqlock::guard(kept_beside.front(), moved); }) ==
              sqlock::errc::lost);
        exec(h, "ROLLBACK");

        // Assigned over: its own statements finalized, the other's taken.
        SqliteTransaction other(h, statements::kept);
        other.run("SELECT 2", {});
        CHECK(prepared_on(h) == 2);
        other = std::move(kept_beside.front());
        CHECK(prepared_on(h) == 1);
        kept_beside.clear();  // the moved-from: finalizes nothing
        CHECK(prepared_on(h) == 1);
    }
    CHECK(prepared_on(h) == 0);
    CHECK(sqlite3_close(h) == SQLITE_OK);
}

TEST_CASE("a kept statement that failed runs again, with none of the last run's values",
          "[sqlite][guard]") {
    const std::string path = scratch_file("kept-values.db");
    sqlite3* h = open_handle(path);
    exec(h, "CREATE TABLE names (name TEXT UNIQUE)");
    {
        SqliteTransaction tx(h, statements::kept);
        const std::string insert = "INSERT INTO names VALUES (?)";
        tx.run(insert, {"a"});
        try {
            tx.run(insert, {"a"});
            FAIL("a second 'a' was inserted");
        } catch (const sqlock::error& e) {
            CHECK(e.backend_code() == "SQLITE_CONSTRAINT");
            CHECK(std::string(e.what()).find("UNIQUE") != std::string::npos);
        }
        CHECK_NOTHROW(tx.run(insert, {"b"}));
        CHECK(count_of(h, "names") == "2");

        const auto both = tx.run("SELECT ?1, ?2", {"x", "y"});
        CHECK(both.at(0).at(1) == std::optional<std::string>("y"));
        const auto one = tx.run("SELECT ?1, ?2", {"x"});
        CHECK(one.at(0).at(1) == std::nullopt);  // not the last run's "y"

        CHECK(tx.run("  -- nothing\n", {}).empty());
    }
    CHECK(sqlite3_close(h) == SQLITE_OK);
}

TEST_CASE("transaction-scoped locks through a kept adapter, again and again", "[sqlite][guard]") {
    const std::string path = scratch_file("kept-scoped.db");
    sqlock::Locker locker("sqlite://" + path);
    locker.init();
    sqlite3* h = open_handle(path);
    {
        SqliteTransaction tx(h, statements::kept);
        std::int64_t last = 0;
        for (int i = 0; i < 3; ++i) {
            exec(h, "BEGIN");
            // A new row each time: the kept insert ran again, and its
            // RETURNING came back after the reset.
            const std::int64_t id = locker.lock_transaction(tx, "invoice-42");
            CHECK(id > last);
            last = id;
            exec(h, "COMMIT");
        }
        CHECK(prepared_on(h) == 3);  // its delete, insert and delete, compiled once
    }
    CHECK(sqlite3_close(h) == SQLITE_OK);
}
