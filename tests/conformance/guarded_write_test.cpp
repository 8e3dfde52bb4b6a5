// Guarded writes and transaction-scoped locks: the application's own
// transaction, through the backend's client library and sqlock's adapter
// for its handle, commits only while the lock is held; a lock taken inside
// such a transaction lasts exactly as long as it.
//
// Every test needs a transaction of several statements ([needs:transactions]):
// through PgBouncer in statement mode, which refuses the client's BEGIN,
// there is nothing to guard (docs/guarded-writes.md says so), and the tests
// are reported as not run there.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::AppTransaction;
using sqlock_test::category_of;
using sqlock_test::eventually;
using sqlock_test::fresh_database;

namespace {

// The application's data: who wrote, in a table beside the lock table.
std::string data_table(const sqlock_test::Database& db) {
    const std::string table = db.table + "_data";
    sqlock_test::exec_sql(db, "CREATE TABLE " + table + " (who VARCHAR(64))");
    return table;
}

std::multiset<std::string> writers(const sqlock_test::Database& db, const std::string& table) {
    std::multiset<std::string> out;
    for (const auto& row : sqlock_test::query(db, "SELECT who FROM " + table))
        out.insert(row.at(0).value_or("NULL"));
    return out;
}

sqlock::LockOptions lease_of(sqlock::duration lease) {
    sqlock::LockOptions o;
    o.expires = lease;
    return o;
}

// Whether the server rolled the application's transaction back, as it may
// any transaction under SERIALIZABLE (or REPEATABLE READ): a serialization
// failure or a deadlock, told by sqlock (errc::busy with the server's code)
// or by the application's own statement. The transaction must run again
// (docs/guarded-writes.md).
bool must_run_again(const std::exception& e) {
    if (auto* s = dynamic_cast<const sqlock::error*>(&e)) {
        const std::string& code = s->backend_code();
        return s->category() == sqlock::errc::busy &&
               (code == "40001" || code == "40P01" || code.rfind("1213/", 0) == 0);
    }
    const std::string what = e.what();
    return what.find("could not serialize access") != std::string::npos ||
           what.find("deadlock detected") != std::string::npos ||
           what.find("Deadlock found") != std::string::npos;
}

bool expired(sqlock::Locker& locker, const std::string& name) {
    auto info = locker.show(name);
    return info && info->expired();
}

// How long a transaction stays open while another call is under way: long
// enough that a call that did not wait for it would have returned before it
// ends (each is one round trip), so "returned after the commit" proves the
// wait.
constexpr auto held_open = 600ms;

}  // namespace

TEST_CASE("a guarded write commits while the lock is held", "[guard][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto locker = db.open();
    auto lock = locker.lock("ledger");
    auto tx = sqlock_test::app_transaction(db);
    sqlock::guard(tx->adapter(), lock);
    tx->query("INSERT INTO " + data + " (who) VALUES ('holder')");
    tx->commit();
    CHECK(writers(db, data) == std::multiset<std::string>{"holder"});
    // Nothing of the guard stays: the lock is released as usual.
    lock.release();
    CHECK_FALSE(locker.show("ledger"));
}

TEST_CASE("a paused holder's guarded write fails after a take-over",
          "[guard][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto first = db.open();
    auto second = db.open();
    // The first holder stops (no heartbeat runs while it is paused) until
    // its lease has run out and the second has taken the name.
    auto stale = first.lock("ledger", lease_of(300ms));
    REQUIRE(eventually([&] { return expired(second, "ledger"); }));
    auto current = second.lock("ledger");
    auto newer = sqlock_test::app_transaction(db);
    sqlock::guard(newer->adapter(), current);
    newer->query("INSERT INTO " + data + " (who) VALUES ('second')");
    newer->commit();

    // The first wakes up and writes: its guard refuses, naming the lock.
    auto late = sqlock_test::app_transaction(db);
    late->query("INSERT INTO " + data + " (who) VALUES ('first, before its guard')");
    try {
        sqlock::guard(late->adapter(), stale);
        FAIL("the guard of a lock taken over passed");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
        CHECK(std::string(e.what()).find("'ledger'") != std::string::npos);
    }
    // Its transaction can still roll back, and nothing of it is left.
    CHECK_NOTHROW(late->rollback());
    CHECK(writers(db, data) == std::multiset<std::string>{"second"});
}

TEST_CASE("a take-over waits for a guarded transaction in progress",
          "[guard][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto first = db.open();
    auto second = db.open();
    auto lock = first.lock("ledger", lease_of(300ms));
    auto tx = sqlock_test::app_transaction(db);
    sqlock::guard(tx->adapter(), lock);
    // The lease runs out while the guarded transaction is still open...
    REQUIRE(eventually([&] { return expired(second, "ledger"); }));
    std::atomic<bool> committed{false};
    auto taker = std::async(std::launch::async, [&] {
        sqlock::LockOptions o;
        o.wait = 30s;
        auto taken = second.lock("ledger", o);
        return committed.load();
    });
    // ...and the write it makes then still commits: nobody took the name.
    CHECK(taker.wait_for(held_open) == std::future_status::timeout);
    tx->query("INSERT INTO " + data + " (who) VALUES ('first')");
    committed = true;
    tx->commit();
    CHECK(taker.get());
    CHECK(writers(db, data) == std::multiset<std::string>{"first"});
}

TEST_CASE("force release and reap wait for a guarded transaction in progress",
          "[guard][needs:transactions]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto admin = db.open();
    std::atomic<bool> committed{false};

    SECTION("force release") {
        auto lock = holder.lock("ledger");
        auto tx = sqlock_test::app_transaction(db);
        sqlock::guard(tx->adapter(), lock);
        auto release = std::async(std::launch::async, [&] {
            auto gone = admin.force_release("ledger");
            return gone.has_value() && committed.load();
        });
        CHECK(release.wait_for(held_open) == std::future_status::timeout);
        committed = true;
        tx->commit();
        CHECK(release.get());
        CHECK(lock.held() == false);
    }
    SECTION("reap") {
        auto lock = holder.lock("ledger", lease_of(300ms));
        auto tx = sqlock_test::app_transaction(db);
        sqlock::guard(tx->adapter(), lock);
        REQUIRE(eventually([&] { return expired(admin, "ledger"); }));
        auto reap = std::async(std::launch::async, [&] {
            const std::size_t purged = admin.purge_expired();
            return purged == 1 && committed.load();
        });
        CHECK(reap.wait_for(held_open) == std::future_status::timeout);
        committed = true;
        tx->commit();
        CHECK(reap.get());
        CHECK_FALSE(admin.show("ledger"));
    }
}

TEST_CASE("a guard guards every row of a lock set, and a leader's lock",
          "[guard][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto locker = db.open();
    auto other = db.open();
    auto set = locker.lock_all({"a", "b"});
    {
        auto tx = sqlock_test::app_transaction(db);
        sqlock::guard(tx->adapter(), set);
        tx->query("INSERT INTO " + data + " (who) VALUES ('set')");
        tx->commit();
    }
    REQUIRE(other.force_release("b"));
    auto tx = sqlock_test::app_transaction(db);
    CHECK(category_of([&] { sqlock::guard(tx->adapter(), set); }) == sqlock::errc::lost);
    tx->rollback();
    CHECK(writers(db, data) == std::multiset<std::string>{"set"});
}

TEST_CASE("a shared hold guards its marker too", "[guard][needs:transactions]") {
    auto db = fresh_database();
    auto readers = db.open();
    auto writer = db.open();
    sqlock::LockOptions shared = lease_of(300ms);
    shared.mode = sqlock::lock_mode::shared;
    auto hold = readers.lock("catalog", shared);
    auto tx = sqlock_test::app_transaction(db);
    sqlock::guard(tx->adapter(), hold);
    REQUIRE(eventually([&] { return expired(writer, "catalog"); }));
    std::atomic<bool> committed{false};
    auto exclusive = std::async(std::launch::async, [&] {
        sqlock::LockOptions o;
        o.wait = 30s;
        auto taken = writer.lock("catalog", o);
        return committed.load();
    });
    CHECK(exclusive.wait_for(held_open) == std::future_status::timeout);
    committed = true;
    tx->commit();
    CHECK(exclusive.get());
}

TEST_CASE("a guard refuses bad input and writes nothing",
          "[guard][validation][needs:transactions]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("ledger");

    SECTION("a released lock") {
        auto released = locker.lock("spent");
        released.release();
        auto tx = sqlock_test::app_transaction(db);
        CHECK(category_of([&] { sqlock::guard(tx->adapter(), released); }) ==
              sqlock::errc::invalid_argument);
        CHECK_NOTHROW(tx->commit());
    }
    SECTION("a moved-from lock") {
        auto moved = std::move(lock);
        auto tx = sqlock_test::app_transaction(db);
        CHECK(category_of([&] {
                  sqlock::guard(tx->adapter(), lock);
              }) ==  // NOLINT(bugprone-use-after-move)
              sqlock::errc::invalid_argument);
        CHECK_NOTHROW(sqlock::guard(tx->adapter(), moved));
        CHECK_NOTHROW(tx->commit());
    }
    SECTION("no transaction open") {
        auto autocommit = sqlock_test::app_transaction(db, /*begin=*/false);
        CHECK(category_of([&] { sqlock::guard(autocommit->adapter(), lock); }) ==
              sqlock::errc::invalid_argument);
        CHECK(category_of([&] {
                  sqlock::lock_transaction(autocommit->adapter(), locker, "scoped");
              }) == sqlock::errc::invalid_argument);
        CHECK(locker.list().size() == 1);
    }
}

// On a server fresh_database() is a new table in the same database: there
// is no other database to try.
TEST_CASE("a guard refuses a transaction on another database",
          "[guard][validation][needs:transactions][needs:embedded]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("ledger");
    // Another file with a lock table of the same name: the lock is not held
    // there.
    auto elsewhere = fresh_database();
    auto tx = sqlock_test::app_transaction(elsewhere);
    try {
        sqlock::guard(tx->adapter(), lock);
        FAIL("a guard on another database passed");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
        CHECK(std::string(e.what()).find("another database") != std::string::npos);
    }
    CHECK_NOTHROW(tx->rollback());
    CHECK(locker.list().size() == 1);
}

TEST_CASE("the guard statement is there for other drivers", "[guard][needs:transactions]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("ledger");
    const sqlock::GuardStatement g = lock.guard_statement();
    CHECK(g.backend == locker.backend_name());
    CHECK(g.name == "ledger");
    REQUIRE(g.params.size() == 4);
    CHECK(g.params[0] == std::to_string(lock.id()));
    CHECK(g.params[1] == lock.locked_by());
    // The literal form is a statement of its own, run as it is.
    auto tx = sqlock_test::app_transaction(db);
    CHECK_NOTHROW(tx->query(g.literal));
    tx->commit();
    lock.release();
    auto late = sqlock_test::app_transaction(db);
    try {
        late->query(g.literal);
        FAIL("the literal guard of a released lock passed");
    } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("lock \"ledger\" is no longer held") != std::string::npos);
    }
    late->rollback();
}

TEST_CASE("a transaction-scoped lock lasts until commit and leaves nothing",
          "[guard][scoped][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto locker = db.open();
    auto other = db.open();
    auto tx = sqlock_test::app_transaction(db);
    const std::int64_t id = sqlock::lock_transaction(tx->adapter(), locker, "batch");
    CHECK(id > 0);
    tx->query("INSERT INTO " + data + " (who) VALUES ('scoped')");
    std::atomic<bool> committed{false};
    auto plain = std::async(std::launch::async, [&] {
        sqlock::LockOptions o;
        o.wait = 30s;
        auto lock = other.lock("batch", o);
        CHECK(lock.id() > id);
        return committed.load();
    });
    CHECK(plain.wait_for(held_open) == std::future_status::timeout);
    committed = true;
    tx->commit();
    CHECK(plain.get());
    CHECK_FALSE(other.show("batch"));
    CHECK(writers(db, data) == std::multiset<std::string>{"scoped"});
}

TEST_CASE("a transaction-scoped lock ends with a rollback, leaving nothing",
          "[guard][scoped][needs:transactions]") {
    auto db = fresh_database();
    auto locker = db.open();
    {
        auto tx = sqlock_test::app_transaction(db);
        sqlock::lock_transaction(tx->adapter(), locker, "batch");
        tx->rollback();
    }
    CHECK(locker.list().empty());
    CHECK(locker.try_lock("batch"));
}

TEST_CASE("a DBIx::Locker program waits for a transaction-scoped lock",
          "[guard][scoped][needs:transactions]") {
    auto db = fresh_database();
    auto locker = db.open();
    auto tx = sqlock_test::app_transaction(db);
    sqlock::lock_transaction(tx->adapter(), locker, "batch");
    std::atomic<bool> committed{false};
    auto dbix = std::async(std::launch::async, [&] {
        sqlock_test::exec_sql(db, "INSERT INTO " + db.table +
                                      " (lockstring, created, expires, locked_by) VALUES"
                                      " ('batch', '2001-01-01 00:00:00', '2999-01-01 00:00:00',"
                                      " '{\"host\":\"perl\",\"pid\":1}')");
        return committed.load();
    });
    CHECK(dbix.wait_for(held_open) == std::future_status::timeout);
    committed = true;
    tx->commit();
    CHECK(dbix.get());
    auto info = locker.show("batch");
    REQUIRE(info);
    CHECK(info->holder.host == "perl");
}

TEST_CASE("a busy transaction-scoped lock leaves the transaction usable",
          "[guard][scoped][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    auto locker = db.open();
    auto holder = db.open();
    auto held = holder.lock("batch");
    auto tx = sqlock_test::app_transaction(db);
    CHECK(category_of([&] { sqlock::lock_transaction(tx->adapter(), locker, "batch"); }) ==
          sqlock::errc::busy);
    CHECK(category_of([&] { sqlock::lock_transaction(tx->adapter(), locker, "batch", 200ms); }) ==
          sqlock::errc::timeout);
    tx->query("INSERT INTO " + data + " (who) VALUES ('after busy')");
    CHECK_NOTHROW(tx->commit());
    CHECK(writers(db, data) == std::multiset<std::string>{"after busy"});
    // The holder's lock was not disturbed: it renews and releases as usual.
    CHECK_NOTHROW(held.renew());
    CHECK_NOTHROW(held.release());
}

TEST_CASE("a second transaction-scoped lock waits for the first's commit",
          "[guard][scoped][needs:transactions]") {
    auto db = fresh_database();
    auto first = db.open();
    auto second = db.open();
    auto tx1 = sqlock_test::app_transaction(db);
    const std::int64_t id1 = sqlock::lock_transaction(tx1->adapter(), first, "batch");
    std::atomic<bool> committed{false};
    auto waiter = std::async(std::launch::async, [&] {
        for (;;) {
            auto tx2 = sqlock_test::app_transaction(db);
            try {
                const std::int64_t id2 =
                    sqlock::lock_transaction(tx2->adapter(), second, "batch", 30s);
                const bool after = committed.load();
                tx2->commit();
                return after && id2 > id1;
            } catch (const std::exception& e) {
                if (!must_run_again(e)) throw;
                tx2->rollback();  // serializable: the first's commit was in its way
            }
        }
    });
    CHECK(waiter.wait_for(held_open) == std::future_status::timeout);
    committed = true;
    tx1->commit();
    CHECK(waiter.get());
    CHECK(first.list().empty());
}

TEST_CASE("processes mixing transaction-scoped and plain locks never overlap",
          "[guard][scoped][stress][needs:transactions]") {
    auto db = fresh_database();
    const std::string data = data_table(db);
    // The witness lives outside the database: a file only one holder at a
    // time can create. Half the processes take the name inside their
    // transaction, half with an ordinary lock() whose write is guarded.
    const std::string witness =
        sqlock_test::scratch_dir() + "/scoped-witness-" + std::to_string(getpid());
    const int procs = 4, rounds = 10;
    auto codes = sqlock_test::run_children(procs, [&](int i) {
        auto locker = db.open();
        for (int r = 0; r < rounds; ++r) {
            auto tx = sqlock_test::app_transaction(db);
            std::optional<sqlock::Lock> lock;
            bool inside = false;  // the witness is ours
            try {
                if (i % 2 == 0) {
                    try {
                        sqlock::lock_transaction(tx->adapter(), locker, "the-one", 60s);
                    } catch (const sqlock::error& e) {
                        // SQLite: taken in the instant between the look and
                        // the insert, with the write lock now ours: start
                        // again.
                        if (e.category() != sqlock::errc::busy) throw;
                        tx->rollback();
                        --r;
                        continue;
                    }
                } else {
                    sqlock::LockOptions o;
                    o.wait = 60s;
                    lock = locker.lock("the-one", o);
                    sqlock::guard(tx->adapter(), *lock);
                }
                if (!sqlock_test::enter_witness(witness)) return 2;  // two holders at once
                inside = true;
                tx->query("INSERT INTO " + data + " (who) VALUES ('p" + std::to_string(i) + "')");
                inside = false;
                sqlock_test::leave_witness(witness);
                tx->commit();
            } catch (const std::exception& e) {
                // Serializable: the server rolled the transaction back (the
                // witness is still ours: nobody else got in meanwhile).
                if (!must_run_again(e)) throw;
                if (inside) sqlock_test::leave_witness(witness);
                tx->rollback();
                --r;
            }
        }
        return 0;
    });
    CHECK(codes == std::vector<int>(procs, 0));
    CHECK(sqlock_test::query(db, "SELECT COUNT(*) FROM " + data).at(0).at(0) ==
          std::to_string(procs * rounds));
    CHECK(db.open().list().empty());
}

TEST_CASE("a least-privilege account can guard and take transaction-scoped locks",
          "[guard][privileges][needs:transactions][needs:server]") {
    // Whoever may write an SQLite file may do everything: no accounts.
    auto db = fresh_database();
    const std::string data = data_table(db);
    // What docs/SECURITY.md tells an administrator to grant, and the
    // application's own table.
    const sqlock_test::Database app_db = sqlock_test::least_privileged(db);
    sqlock_test::exec_sql(db, "GRANT SELECT, INSERT ON " + data + " TO sqlock_noaccess");
    sqlock::LockerOptions options;
    options.table = db.table;
    sqlock::Locker locker(app_db.url, options);
    auto lock = locker.lock("ledger");
    {
        auto tx = sqlock_test::app_transaction(app_db);
        CHECK_NOTHROW(sqlock::guard(tx->adapter(), lock));
        tx->query("INSERT INTO " + data + " (who) VALUES ('least')");
        tx->commit();
    }
    {
        auto tx = sqlock_test::app_transaction(app_db);
        CHECK(sqlock::lock_transaction(tx->adapter(), locker, "scoped") > 0);
        tx->commit();
    }
    CHECK(writers(db, data) == std::multiset<std::string>{"least"});
}
