// A server that refuses GET_LOCK (error 1235, as MariaDB releases with
// Galera did: "This version of MariaDB doesn't yet support 'GET_LOCK in
// cluster (WSREP_ON=ON)'") still locks: the backend takes each name's turn
// as a row lock instead (mariadb_statements.hpp, row turns). The refusal is
// made real on the test server: the backend's test hook
// $SQLOCK_TEST_MARIADB_GET_LOCK names a stored function to call where it
// would call GET_LOCK, and this one fails as such a server does. Each lock
// kind then takes its names one holder at a time, in processes of its own.
#include <sqlock/sqlock.hpp>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>

#include "process.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::lock_options;

namespace {

// The stand-in for GET_LOCK, made once on the test server's database.
std::string refusing_get_lock(const sqlock_test::Database& db) {
    const std::string name = "sqlock_test_refused_get_lock";
    sqlock_test::exec_sql(
        db, "CREATE FUNCTION IF NOT EXISTS " + name +
                "(lock_name VARCHAR(64), timeout DOUBLE) RETURNS INT NO SQL BEGIN SIGNAL SQLSTATE"
                " '42000' SET MYSQL_ERRNO = 1235, MESSAGE_TEXT = 'This version of MariaDB "
                "doesn''t yet support ''GET_LOCK in cluster (WSREP_ON=ON)'''; RETURN 0; END");
    return name;
}

// One value of `sql` on `db`'s server.
std::string value_of(const sqlock_test::Database& db, const std::string& sql) {
    return sqlock_test::query(db, sql).at(0).at(0).value_or("");
}

// An environment variable set for as long as it lives: a test hook that an
// exception left set would reach the tests after it.
class HookSet {
  public:
    HookSet(std::string name, const std::string& value) : name_(std::move(name)) {
        setenv(name_.c_str(), value.c_str(), 1);
    }
    ~HookSet() { unsetenv(name_.c_str()); }
    HookSet(const HookSet&) = delete;
    HookSet& operator=(const HookSet&) = delete;

  private:
    std::string name_;
};

sqlock::LockOptions shared() {
    sqlock::LockOptions o;
    o.mode = sqlock::lock_mode::shared;
    return o;
}

}  // namespace

TEST_CASE("a server that refuses GET_LOCK still locks, with row turns", "[mariadb][turn]") {
    auto db = sqlock_test::fresh_database();
    // The hook is read when a Locker is made: set before any is, and unset
    // however the test ends.
    const HookSet hook("SQLOCK_TEST_MARIADB_GET_LOCK", refusing_get_lock(db));
    const std::string turns = "SELECT COUNT(*) FROM " + db.table + "_fencing";
    CHECK(value_of(db, turns) == "0");

    // Four processes, one holder at a time: each adds one to a counter it
    // reads and writes back under the lock (forked before this process has
    // a Locker, and with it any thread).
    sqlock_test::exec_sql(
        db, "CREATE TABLE " + db.table + "_n (v INT); INSERT INTO " + db.table + "_n VALUES (0)");
    const auto codes = sqlock_test::run_children(4, [&](int) {
        auto mine = db.open();
        for (int i = 0; i < 10; ++i) {
            auto lock = mine.lock("counter", lock_options().wait(60s));
            const std::string v = value_of(db, "SELECT v FROM " + db.table + "_n");
            sqlock_test::exec_sql(
                db, "UPDATE " + db.table + "_n SET v = " + std::to_string(std::stoi(v) + 1));
        }
        return 0;
    });
    CHECK(codes == std::vector<int>(4, 0));
    CHECK(value_of(db, "SELECT v FROM " + db.table + "_n") == "40");
    // The turns were rows: the refusal was seen, and answered.
    CHECK(value_of(db, turns) == "1");

    auto locker = db.open();
    // Exclusive: taken, refused to another, renewed, handed over.
    auto held = locker.lock("ledger", lock_options().expires(30s));
    CHECK_FALSE(db.open().try_lock("ledger"));
    held.renew();
    const std::int64_t first = held.id();
    held.release();
    auto next = db.open().lock("ledger");
    CHECK(next.id() > first);
    next.release();
    // A semaphore, a shared name, a set of both kinds.
    auto slot1 = locker.acquire_slot("pool", 2);
    auto slot2 = locker.acquire_slot("pool", 2);
    CHECK_FALSE(db.open().try_acquire_slot("pool", 2));
    slot1.renew();
    slot1.release();
    CHECK(db.open().try_acquire_slot("pool", 2));
    auto reader1 = locker.lock("doc", shared());
    auto reader2 = db.open().lock("doc", shared());
    CHECK_FALSE(db.open().try_lock("doc"));
    reader1.renew();
    reader1.release();
    reader2.release();
    CHECK(db.open().try_lock("doc"));
    auto set = locker.lock_all({{"a", sqlock::lock_mode::shared}, {"b"}});
    CHECK_FALSE(db.open().try_lock("b"));
    CHECK_FALSE(db.open().try_lock("a"));
    set.renew();
    set.release();
    CHECK(db.open().try_lock_all({"a", "b"}));
    // A transaction-scoped lock, in the application's transaction.
    auto app = sqlock_test::app_transaction(db, /*begin=*/true);
    CHECK(sqlock::lock_transaction(app->adapter(), locker, "invoice") > 0);
    // (An attempt waits for the transaction, up to its statement bound.)
    CHECK_FALSE(db.open(sqlock_test::locker_options().db_timeout(1s)).try_lock("invoice"));
    app->commit();
    CHECK(db.open().try_lock("invoice"));
}
