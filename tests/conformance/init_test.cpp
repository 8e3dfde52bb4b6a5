// Creating the lock table: auto_init makes it on first use only when asked
// to, or for the embedded default database; init brings tables made by an
// older sqlock up to date.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

TEST_CASE("auto_init creates the table only when asked, or for the embedded default", "[init]") {
    using mode = sqlock::LockerOptions::auto_init_mode;
    auto db = fresh_database();  // the database exists; the table below does not
    const std::string table =
        sqlock_test::is_server_backend() ? db.table + "_auto" : "auto_created";
    auto needs_init = [&](mode m) {
        sqlock::Locker locker(db.url, locker_options().table(table).auto_init(m));
        try {
            locker.try_lock("first");
            FAIL("the table was there or was created");
        } catch (const sqlock::error& e) {
            CHECK(e.category() == sqlock::errc::configuration);
            CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
        }
    };

    SECTION("by default a URL's table is not created: configuration error, nothing made") {
        needs_init(mode::when_default);
        needs_init(mode::never);  // still missing after the attempt above
    }
    SECTION("`always` creates it on first use, for everyone") {
        sqlock::Locker creating(db.url, locker_options().table(table).auto_init(mode::always));
        auto lock = creating.try_lock("first");
        REQUIRE(lock);
        sqlock::Locker other(db.url, locker_options().table(table).auto_init(mode::never));
        CHECK_FALSE(other.try_lock("first"));
        CHECK(other.list().size() == 1);
    }
    SECTION("the embedded default: created by default, not with `never`") {
        const std::string state = sqlock_test::scratch_dir() + "/auto-init-state";
        const char* old_xdg = std::getenv("XDG_STATE_HOME");
        const char* old_db = std::getenv("SQLOCK_DB");
        const std::string saved_xdg = old_xdg ? old_xdg : "", saved_db = old_db ? old_db : "";
        struct Restore {
            bool had_xdg, had_db;
            const std::string &xdg, &db;
            ~Restore() {
                had_xdg ? setenv("XDG_STATE_HOME", xdg.c_str(), 1) : unsetenv("XDG_STATE_HOME");
                had_db ? setenv("SQLOCK_DB", db.c_str(), 1) : unsetenv("SQLOCK_DB");
            }
        } restore{old_xdg != nullptr, old_db != nullptr, saved_xdg, saved_db};
        setenv("XDG_STATE_HOME", state.c_str(), 1);
        unsetenv("SQLOCK_DB");
        {
            sqlock::Locker never("", locker_options().auto_init(mode::never));
            try {
                never.try_lock("first");
                FAIL("`never` created the table of the embedded default");
            } catch (const sqlock::error& e) {
                CHECK(e.category() == sqlock::errc::configuration);
            }
        }
        sqlock::Locker embedded("");
        CHECK(embedded.try_lock("first"));
    }
}

namespace {

// The queue as an older sqlock made it: no join times.
void drop_join_times(const sqlock_test::Database& db) {
    sqlock_test::exec_sql(db, "ALTER TABLE " + db.table + "_queue DROP COLUMN joined");
}

// The tickets in db's queue, in order.
std::vector<long long> tickets(const sqlock_test::Database& db) {
    std::vector<long long> out;
    for (const auto& row :
         sqlock_test::query(db, "SELECT id FROM " + db.table + "_queue ORDER BY id"))
        out.push_back(std::stoll(row.at(0).value()));
    return out;
}

const sqlock::NameActivity* activity_of(const sqlock::LockActivity& a, const std::string& name) {
    for (const auto& n : a.names)
        if (n.name == name) return &n;
    return nullptr;
}

}  // namespace

TEST_CASE("init gives a queue made before join times its join times; its waiters keep their places",
          "[init][queue]") {
    auto db = fresh_database();
    drop_join_times(db);
    auto locker = db.open();
    auto held = locker.lock("turn", lock_options().expires(1h));

    // The first in line, and one behind it that leaves again: the highest
    // ticket drawn is then no longer in the table.
    std::atomic<int> served{0};
    std::atomic<int> first_served{0}, last_served{0};
    sqlock_test::ScopedThread first([&] {
        auto lock = db.open().lock("turn", lock_options().wait(60s));
        first_served = ++served;
    });
    REQUIRE(eventually([&] { return locker.queue_length("turn") == 1; }, 30s));
    const std::vector<long long> before = tickets(db);
    REQUIRE(before.size() == 1);
    std::atomic<bool> leave{false};
    sqlock_test::ScopedThread second([&] {
        sqlock::LockOptions o = lock_options().wait(60s);
        o.progress_every = 20ms;
        o.on_waiting = [&](const sqlock::LockInfo*, sqlock::duration) { return !leave.load(); };
        CHECK(sqlock_test::category_of([&] { db.open().lock("turn", o); }) ==
              sqlock::errc::timeout);
    });
    REQUIRE(eventually([&] { return locker.queue_length("turn") == 2; }, 30s));
    const long long given_back = tickets(db).back();
    leave = true;
    second.join();
    REQUIRE(tickets(db) == before);

    // Without join times: the line is counted, its age is not known.
    sqlock::LockActivity old = locker.lock_activity();
    CHECK_FALSE(old.waiter_ages);
    REQUIRE(activity_of(old, "turn"));
    CHECK(activity_of(old, "turn")->waiters == 1);
    CHECK(activity_of(old, "turn")->oldest_waiter_seconds == 0.0);

    CHECK(db.open().init().empty());
    CHECK(db.open().init().empty());  // again: nothing left to do
    sqlock::LockActivity now = locker.lock_activity();
    CHECK(now.waiter_ages);
    REQUIRE(activity_of(now, "turn"));
    CHECK(activity_of(now, "turn")->waiters == 1);
    CHECK(activity_of(now, "turn")->oldest_waiter_seconds >= 0.0);
    CHECK(activity_of(now, "turn")->oldest_waiter_seconds < 600.0);
    CHECK(tickets(db) == before);  // the same waiter, the same ticket

    // A newcomer goes behind it, with a ticket never drawn before.
    sqlock_test::ScopedThread last([&] {
        auto lock = db.open().lock("turn", lock_options().wait(60s));
        last_served = ++served;
    });
    REQUIRE(eventually([&] { return locker.queue_length("turn") == 2; }, 30s));
    const std::vector<long long> after = tickets(db);
    REQUIRE(after.size() == 2);
    CHECK(after[0] == before[0]);
    CHECK(after[1] > given_back);
    held.release();
    first.join();
    last.join();
    CHECK(first_served == 1);
    CHECK(last_served == 2);
}

TEST_CASE("init by a user that may not alter the queue leaves it as it was, with a note",
          "[init][queue][needs:server]") {
    auto db = fresh_database();
    drop_join_times(db);
    const sqlock_test::Database limited = sqlock_test::least_privileged(db);
    auto locker = limited.open();
    const std::vector<std::string> notes = locker.init();
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find(db.table + "_queue") != std::string::npos);
    CHECK(notes[0].find("joined") != std::string::npos);
    CHECK(notes[0].find("sqlock init") != std::string::npos);
    CHECK_FALSE(locker.lock_activity().waiter_ages);
    // Every lock works as before, the line too.
    auto held = locker.lock("turn", lock_options().expires(1h));
    sqlock_test::ScopedThread waiter(
        [&] { limited.open().lock("turn", lock_options().wait(60s)); });
    REQUIRE(eventually([&] { return locker.queue_length("turn") == 1; }, 30s));
    held.release();
    waiter.join();
    // The owner's init adds them.
    CHECK(db.open().init().empty());
    CHECK(locker.lock_activity().waiter_ages);
    CHECK(limited.open().init().empty());
}

TEST_CASE("init leaves a queue still in use after a short wait as it was, with a note",
          "[init][queue][needs:server][needs:schema-waits]") {
    auto db = fresh_database();
    drop_join_times(db);
    // A transaction that has read the queue: ALTER TABLE waits for its end.
    auto app = sqlock_test::app_transaction(db);
    app->query("SELECT COUNT(*) FROM " + db.table + "_queue");
    const auto started = std::chrono::steady_clock::now();
    const std::vector<std::string> notes = db.open().init();
    CHECK(std::chrono::steady_clock::now() - started < 30s);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].find("in use") != std::string::npos);
    CHECK(notes[0].find("sqlock init") != std::string::npos);
    app->rollback();
    CHECK(db.open().init().empty());
    CHECK(db.open().lock_activity().waiter_ages);
}
