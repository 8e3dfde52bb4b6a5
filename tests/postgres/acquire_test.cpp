// Acquisition on PostgreSQL: one statement per attempt (and a read of the
// holder when it failed), the id-order key old clients share, no aborted
// transactions for a held name, take-over with a new id, semaphores.
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <regex>
#include <set>
#include <thread>

#include "pg_test.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::history_query;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

bool is_utc_text(const std::string& t) {
    static const std::regex format(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3})");
    return std::regex_match(t, format);
}

long long rollbacks() {
    return std::stoll(pg_test::query(
        pg_test::url(),
        "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()"));
}

}  // namespace

TEST_CASE("a lock row carries server times as UTC text and a growing id", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto lock = a.lock("times", lock_options().expires(90s));
    CHECK(is_utc_text(lock.created()));
    CHECK(is_utc_text(lock.expires()));
    // created is the server's now, in UTC.
    std::string server_now =
        pg_test::query(db.url, "SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI')");
    CHECK(lock.created().substr(0, 16) <= server_now);
    auto info = a.show("times");
    REQUIRE(info);
    CHECK(info->seconds_left > 85.0);
    CHECK(info->seconds_left <= 90.0);
    CHECK(info->id == lock.id());
    // The acquisition returns only id and created; the client writes the
    // rest. It must read exactly as the server shows the row.
    CHECK(lock.created() == info->created);
    CHECK(lock.expires() == info->expires);
}

TEST_CASE("the id-order advisory key is the one earlier versions computed on the server", "[pg]") {
    // sqlock before 0.2 took pg_advisory_xact_lock(table, hashtext(name
    // without "#N")) with regexp_replace on the server; now the client strips
    // the suffix. An old client holding that key must still make a new one
    // wait, or the two could hand out ids out of order for one name.
    auto db = fresh_database();
    auto locker = db.open();
    locker.init();
    for (const std::string name :
         {"job", "job#12", "sem#3", "#7", "a#b", "x#", "x#1y", "a##3", "r\u00e9sum\u00e9#0042"}) {
        INFO("name: " << name);
        PGconn* old_client = PQconnectdb(db.url.c_str());
        REQUIRE(PQstatus(old_client) == CONNECTION_OK);
        PQclear(PQexec(old_client, "BEGIN"));
        const std::string quoted = "\"" + db.table + "\"";
        const char* params[] = {quoted.c_str(), name.c_str()};
        PGresult* r = PQexecParams(
            old_client,
            "SELECT pg_advisory_xact_lock(hashtext('sqlock ' || $1::regclass::oid::text),"
            " hashtext(regexp_replace($2::text, '#[0-9]+$', '')))",
            2, nullptr, params, nullptr, nullptr, 0);
        REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
        PQclear(r);
        std::atomic<bool> got{false};
        std::thread taker([&] {
            try {
                got = locker.try_lock(name).has_value();
            } catch (const sqlock::error&) {
                // got stays false: the CHECK below reports it
            }
        });
        // The new client waits for the old one's key (other suites may
        // share the server: only this key counts)...
        const std::string waiting =
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND objsubid = 2 AND classid = (hashtext('sqlock ' || '" +
            quoted +
            "'::regclass::oid::text)::bigint & 4294967295)::oid"
            " AND objid = (hashtext(regexp_replace($q$" +
            name + "$q$, '#[0-9]+$', ''))::bigint & 4294967295)::oid";
        CHECK(sqlock_test::eventually([&] { return pg_test::query(db.url, waiting) == "1"; }));
        CHECK_FALSE(got.load());
        // ... and gets the lock once it is let go.
        PQclear(PQexec(old_client, "COMMIT"));
        taker.join();
        CHECK(got.load());
        PQfinish(old_client);
    }
}

TEST_CASE("an expired lock is taken over with a new, larger id", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto b = db.open();
    b.list();  // connected before the lease starts: a slow connect must not outlast it
    // 1 s: ten times what the check below takes under a sanitizer here.
    auto old = a.lock("takeover", lock_options().expires(1s));
    CHECK_FALSE(b.try_lock("takeover"));
    REQUIRE(sqlock_test::eventually([&] { return b.show("takeover")->expired(); }));
    auto taken = b.try_lock("takeover", lock_options().expires(1h));
    REQUIRE(taken);
    CHECK(taken->id() > old.id());
    // The old handle can neither renew nor release the new holder's row.
    CHECK_THROWS_MATCHES(old.renew(), sqlock::error,
                         Catch::Predicate<sqlock::error>([](const sqlock::error& e) {
                             return e.category() == sqlock::errc::lost;
                         }));
    try {
        old.release();
        FAIL("releasing a taken-over lock must throw lost");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::lost);
    }
    CHECK(taken->held());
    auto row = a.show("takeover");
    REQUIRE(row);
    CHECK(row->id == taken->id());
}

TEST_CASE("busy names the holder, read right after the failed attempt", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto held = a.lock("holder-named", lock_options().metadata({{"job", "nightly"}}));
    auto b = db.open();
    try {
        b.lock("holder-named");
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        std::string msg = e.what();
        CHECK(msg.find(std::to_string(getpid())) != std::string::npos);
        CHECK(msg.find("expires in") != std::string::npos);
        CHECK_FALSE(pg_test::leaks_password(msg));
    }
}

TEST_CASE(
    "a held name costs an attempt and a read of the holder, a take-over one statement, "
    "and none aborts a transaction",
    "[pg][serial][needs:server-script][needs:server-dir]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto held = holder.lock("contended");
    // A crashed holder's row, expired an hour ago.
    pg_test::query(db.url, "INSERT INTO " + db.table +
                               " (lockstring, created, expires, locked_by) VALUES ('stale',"
                               " now() - interval '2 hours', now() - interval '1 hour', 'gone')");
    const std::string app = pg_test::unique("oneshot");
    const std::string prefix = "app=" + app + " ";
    const long long before = rollbacks();
    const std::size_t log_start = pg_test::server_log_size();
    {
        auto locker = pg_test::logged_locker(db, app);
        for (int i = 0; i < 100; ++i) REQUIRE_FALSE(locker.try_lock("contended"));
        // A free name: one statement to take it, one to release it.
        locker.lock("free").release();
        // Taking over the expired row: one statement too.
        locker.lock("stale").release();
        auto slot = locker.try_acquire_slot("sem", 5);
        REQUIRE(slot);
        slot->release();
    }  // closes the connection: its statistics reach pg_stat_database
    std::string log = pg_test::server_log(log_start);
    std::size_t ours = pg_test::count(log, prefix);
    INFO("server log lines of this test's connection: " << ours);
    // Prepared statements are named "<key>/<hash of their SQL>". The table
    // has a queue of waiters: each attempt lets queued waiters go first, in
    // the same statement; a caller without a place in line has none to
    // leave, and sends the statement that does not.
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_gated/") == 102);
    // The holder is read only when the attempt failed.
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_lock_row/") == 100);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_slot_gated/") == 1);
    // Releases without a minimum hold run the plain DELETE (+ NOTIFY when
    // someone waits).
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_delete_exact/") == 3);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_release/") == 0);
    CHECK(pg_test::count(log, prefix + "ERROR:") == 0);
    // Nothing else ran: every logged statement was one of those, and the
    // connection's one look for the tables beside the lock table, which
    // carried the session's settings (isolation, timeouts, index plans) in
    // the same message: no round trip of their own.
    CHECK(pg_test::count(log, prefix + "LOG:  execute ") == 206);
    CHECK(pg_test::count(log, prefix + "LOG:  statement:") == 1);
    const std::string setup = prefix + "LOG:  statement: SET default_transaction_isolation";
    REQUIRE(pg_test::count(log, setup) == 1);
    // The statement's further lines follow its first in the log, indented.
    const std::size_t begin = log.find(setup);
    const std::string statement = log.substr(begin, log.find("\n2", begin) - begin);
    CHECK(statement.find("SET enable_seqscan = 'off';\n\tSELECT to_regclass(") !=
          std::string::npos);

    // The statistics of a closed session arrive shortly after it ends.
    REQUIRE(sqlock_test::eventually(
        [&] {
            return pg_test::query(db.url,
                                  "SELECT count(*) FROM pg_stat_activity WHERE application_name "
                                  "= '" +
                                      app + "'") == "0";
        },
        10s));
    // Our session's statistics are flushed when it ends, which it has. One
    // deliberate rollback in a later session then brings the count to
    // exactly before + 1: it would stay above that had any attempt of ours
    // rolled back, and the deliberate one shows the instrument works.
    pg_test::query(db.url, "BEGIN; SELECT 1; ROLLBACK");
    CHECK(sqlock_test::eventually([&] { return rollbacks() == before + 1; }, 10s));
}

TEST_CASE("semaphore slots: lowest free first, the earliest to expire reported", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto s1 = a.try_acquire_slot("pool", 3, lock_options().expires(1h));
    auto s2 = a.try_acquire_slot("pool", 3, lock_options().expires(10min));
    auto s3 = a.try_acquire_slot("pool", 3, lock_options().expires(1h));
    REQUIRE((s1 && s2 && s3));
    CHECK(s1->slot() == 1);
    CHECK(s2->slot() == 2);
    CHECK(s3->slot() == 3);
    CHECK(s2->lockstring() == "pool#2");
    CHECK_FALSE(a.try_acquire_slot("pool", 3));
    try {
        a.acquire_slot("pool", 3);
        FAIL("must be busy");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::busy);
        CHECK(std::string(e.what()).find("expires in 10m") != std::string::npos);
    }
    s2->release();
    auto again = a.try_acquire_slot("pool", 3);
    REQUIRE(again);
    CHECK(again->slot() == 2);
    // A larger capacity only adds slots above.
    auto fourth = a.try_acquire_slot("pool", 4);
    REQUIRE(fourth);
    CHECK(fourth->slot() == 4);
}

TEST_CASE("an expired semaphore slot is taken over before higher free slots", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto s1 = a.try_acquire_slot("lease", 3, lock_options().expires(1s));
    auto s2 = a.try_acquire_slot("lease", 3, lock_options().expires(1h));
    REQUIRE((s1 && s2));
    auto b = db.open();
    REQUIRE(sqlock_test::eventually([&] { return b.show("lease#1")->expired(); }));
    auto taken = b.try_acquire_slot("lease", 3);
    REQUIRE(taken);
    CHECK(taken->slot() == 1);
    CHECK(taken->id() > s2->id());
    CHECK_THROWS_AS(s1->release(), sqlock::error);  // no longer ours
}

TEST_CASE("several threads racing for slots each get a distinct one", "[pg]") {
    auto db = fresh_database();
    auto a = db.open(locker_options().pool_size(8));
    std::vector<std::optional<sqlock::Lock>> got(8);
    std::atomic<int> errors{0};
    {
        std::vector<sqlock_test::ScopedThread> threads;
        for (int i = 0; i < 8; ++i)
            threads.emplace_back([&, i] {
                try {
                    got[i] = a.try_acquire_slot("race", 5);
                } catch (const sqlock::error&) {
                    ++errors;
                }
            });
    }
    CHECK(errors == 0);
    std::set<int> slots;
    int held = 0;
    for (auto& g : got)
        if (g) {
            ++held;
            slots.insert(g->slot());
        }
    CHECK(held == 5);
    CHECK(slots == std::set<int>{1, 2, 3, 4, 5});
}

TEST_CASE("min_hold keeps the row until created + min_hold", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto lock = a.lock("cron", lock_options().expires(1h).min_hold(700ms));
    lock.release();
    auto row = a.show("cron");
    REQUIRE(row);
    CHECK(row->seconds_left <= 0.7);
    auto other = db.open();
    CHECK_FALSE(other.try_lock("cron"));
    CHECK(sqlock_test::eventually([&] { return other.try_lock("cron").has_value(); }, 5s));
}

TEST_CASE("list orders by bytes and filters by literal prefix", "[pg]") {
    auto db = fresh_database();
    auto a = db.open();
    auto l1 = a.lock("b_x");
    auto l2 = a.lock("B%x");
    auto l3 = a.lock("a");
    auto l4 = a.lock("b%y");
    std::vector<std::string> names;
    for (const auto& i : a.list()) names.push_back(i.name);
    CHECK(names == std::vector<std::string>{"B%x", "a", "b%y", "b_x"});
    names.clear();
    for (const auto& i : a.list("b%")) names.push_back(i.name);
    CHECK(names == std::vector<std::string>{"b%y"});
}

TEST_CASE("on a table vacuumed empty, the prepared release still finds its row by index", "[pg]") {
    auto db = fresh_database();
    // Empty and vacuumed: the planner's cheapest way to find one row is now
    // a sequential scan, and a prepared statement keeps the plan it makes
    // around its sixth run.
    pg_test::query(db.url, "VACUUM ANALYZE " + db.table);
    auto scans = [&] {
        const std::string v = pg_test::query(
            db.url,
            "SELECT seq_scan || ' ' || coalesce(idx_scan, 0) FROM pg_stat_user_tables"
            " WHERE relid = '" +
                db.table + "'::regclass");
        const auto space = v.find(' ');
        return std::make_pair(std::stoll(v.substr(0, space)), std::stoll(v.substr(space + 1)));
    };
    const auto [seq_before, idx_before] = scans();
    {
        auto locker = db.open();
        for (int i = 0; i < 20; ++i) locker.lock("cycle").release();
    }  // a closed session's statistics arrive shortly after
    REQUIRE(sqlock_test::eventually([&] { return scans().second >= idx_before + 20; }));
    // With a sequential scan per release: 20. A few may be statistics of
    // the table's creation that arrived late.
    CHECK(scans().first - seq_before < 10);
}

TEST_CASE("an acquired lock's created and expires are its row's, to the millisecond", "[pg]") {
    // The hot statements return the row's timestamp in binary format; the
    // client's conversion must agree with what every other statement reads.
    auto db = fresh_database();
    auto locker = db.open();
    auto lock = locker.lock("stamped", lock_options().expires(90s));
    auto slot = locker.acquire_slot("stamps", 3, lock_options().expires(90s));
    for (const auto& row : locker.list()) {
        INFO(row.name);
        if (row.name == "stamped") {
            CHECK(row.created == lock.created());
            CHECK(row.expires == lock.expires());
        } else {
            CHECK(row.name == "stamps#1");
            CHECK(row.created == slot.created());
            CHECK(row.expires == slot.expires());
        }
        CHECK(is_utc_text(row.created));
    }
    CHECK(locker.list().size() == 2);
}

TEST_CASE("the pause check and the start of a run are one statement",
          "[pg][needs:server-script][needs:server-dir]") {
    auto db = fresh_database();
    auto admin = db.open();
    admin.init();
    const std::string app = pg_test::unique("runstart");
    const std::string prefix = "app=" + app + " ";
    auto locker = pg_test::logged_locker(db, app);
    auto lock = locker.lock("nightly", lock_options().expires(1min));
    // Learns which side tables there are: once per connection, not per run.
    CHECK_FALSE(sqlock::Pauses(locker).find("nightly"));
    auto statements_during = [&](auto&& f) {
        const std::size_t log_start = pg_test::server_log_size();
        f();
        const std::string log = pg_test::server_log(log_start);
        return pg_test::count(log, prefix + "LOG:  execute ") +
               pg_test::count(log, prefix + "LOG:  statement:");
    };

    sqlock::RunStartOutcome started;
    CHECK(statements_during(
              [&] { started = sqlock::RunHistory(locker).start_run_unless_paused(lock); }) == 1);
    REQUIRE(started.run_id);
    CHECK_FALSE(started.pause);

    // Its end too, sent with its text: a `sqlock run` connects anew, and a
    // prepared statement would cost a PREPARE's round trip just before the
    // release.
    const std::size_t finish_start = pg_test::server_log_size();
    CHECK(sqlock::RunHistory(locker).finish_run(lock, *started.run_id, {}) ==
          sqlock::run_outcome::succeeded);
    const std::string finish_log = pg_test::server_log(finish_start);
    CHECK(pg_test::count(finish_log, prefix + "LOG:  execute <unnamed>") == 1);
    CHECK(pg_test::count(finish_log, prefix + "LOG:  execute sqlock_") == 0);

    sqlock::Pauses(admin).pause("nightly", std::nullopt, "maintenance");
    sqlock::RunStartOutcome refused;
    CHECK(statements_during(
              [&] { refused = sqlock::RunHistory(locker).start_run_unless_paused(lock); }) == 1);
    REQUIRE(refused.pause);
    CHECK(refused.pause->reason == "maintenance");
    CHECK_FALSE(refused.run_id);
    // Only the first run was recorded.
    CHECK(sqlock::RunHistory(admin).runs(history_query().name("nightly")).size() == 1);
}
