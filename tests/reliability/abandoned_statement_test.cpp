// MariaDB runs on with a batch whose client gave up on it: the server only
// notices the closed socket when it next reads from it. A semaphore's slot
// INSERT held up past sqlock's deadline commits later, after the pool's
// retry on a fresh connection looked for a slot of ours, found none, and
// took another: the first stays held by nobody until its lease ends. sqlock
// ends such a session (KILL) before its next statement to that server, so
// what the abandoned batch would have written is either visible to the
// retry or never written.
//
// MariaDB only: the hold-up is a trigger that sleeps in the INSERT.
#include <catch2/catch.hpp>
#include <optional>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

std::string first_value(const sqlock_test::Database& db, const std::string& sql) {
    return reliability::query(db, sql).at(0).at(0).value_or("");
}

// Sessions of the test account, but the asking one, that are running a
// statement: none means no batch is still on its way to a commit.
bool all_sessions_idle(const sqlock_test::Database& db) {
    return first_value(db,
                       "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE "
                       "USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1) AND ID <> CONNECTION_ID() "
                       "AND COMMAND <> 'Sleep'") == "0";
}

}  // namespace

TEST_CASE("a slot insert the server finishes after sqlock gave up on it is never left behind",
          "[abandoned]") {
    const auto db = fresh_database();
    // Inserting slot 1 takes 4 s; each answer is awaited for 1 s.
    sqlock_test::exec_sql(db, "CREATE TRIGGER " + db.table + "_slow BEFORE INSERT ON " + db.table +
                                  " FOR EACH ROW IF NEW.lockstring = 'slow#1' THEN "
                                  "SET @slept = SLEEP(4); END IF");
    sqlock::Locker locker = db.open(locker_options().db_timeout(1s));

    // Slot 1's batch is abandoned after 1 s, its turn still held by the
    // server; the pool's retry finds no slot of ours, and slot 1's turn does
    // not come in time, so it would take slot 2.
    std::optional<sqlock::Lock> lock;
    std::optional<sqlock::errc> failed;
    try {
        lock = locker.try_acquire_slot("slow", 2, lock_options().expires(60s));
    } catch (const sqlock::error& e) {
        failed = e.category();
    }
    // The next statement ends what was abandoned on the way.
    const auto listed = locker.list();
    REQUIRE(eventually([&] { return all_sessions_idle(db); }, 20s));

    // The table holds exactly what the caller was told it holds.
    const auto rows = reliability::query(db, "SELECT id FROM " + db.table);
    if (lock) {
        REQUIRE(rows.size() == 1);
        CHECK(rows[0].at(0) == std::to_string(lock->id()));
    } else {
        if (failed) CHECK(*failed == sqlock::errc::connection);
        CHECK(rows.empty());
        CHECK(listed.empty());
    }
}
