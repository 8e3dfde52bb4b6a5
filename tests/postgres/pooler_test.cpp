// Through PgBouncer (src/backends/postgres/testing/pgbouncer.sh) in
// transaction and statement mode, where server sessions last one
// transaction: every statement works, with or
// without `pooler=` in the URL, processes still take turns one at a time with
// ids growing in acquisition order, and waiters are woken by polling instead
// of waiting on notifications that cannot come.
//
// Runs as ctest entry postgres_pooler.pgbouncer, with $SQLOCK_TEST_PG_URL set
// to the transaction pooler's URL by backend_main.cpp; the statement pooler's
// URL is read from $SQLOCK_TEST_PGBOUNCER_STATEMENT_URL.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <thread>

#include "pg_test.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using steady = std::chrono::steady_clock;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

namespace {

std::string without_pooler(std::string url) {
    std::size_t at = url.find("?pooler=");
    if (at != std::string::npos) url.erase(at);  // pgbouncer.sh puts it last
    return url;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// PgBouncer in statement mode beside the transaction pooler this suite runs
// through (pgbouncer.sh starts both): required where the poolers are.
const sqlock_test::DeclareNeed statement_pooler{
    {"pgbouncer-statement",
     [] {
         return env("SQLOCK_TEST_PGBOUNCER_STATEMENT_URL").empty()
                    ? std::string("SQLOCK_TEST_PGBOUNCER_STATEMENT_URL is not set")
                    : "";
     },
     [] { return sqlock_test::require_all() || env("SQLOCK_TEST_REQUIRE_PGBOUNCER") == "1"; }}};

// `procs` processes take turns on one name `rounds` times each, using every
// statement on the way; returns their exit codes (0: all went well) and the
// ids in the order the witness saw them.
struct Turns {
    std::vector<int> codes;
    std::vector<long long> ids;
};

Turns take_turns(const std::string& url, const std::string& table, const std::string& tag,
                 bool bounded_waits = true) {
    const std::string base = sqlock_test::scratch_dir() + "/turns-" + tag;
    const std::string witness = base + ".witness";
    const std::string order = base + ".ids";
    const int procs = 4, rounds = 10;
    Turns out;
    out.codes = sqlock_test::run_children(procs, [&](int child) {
        sqlock::Locker locker(url, locker_options().table(table).pool_size(2));
        auto longest = steady::duration::zero();
        for (int r = 0; r < rounds; ++r) {
            auto asked = steady::now();
            auto lock = locker.lock("turns", lock_options().expires(30s).wait(60s));
            longest = std::max(longest, steady::now() - asked);
            // Only one process at a time can create the witness.
            if (!sqlock_test::enter_witness(witness)) return 2;
            sqlock_test::append_id(order, lock.id());
            // The other statements, each on a connection the pooler may
            // have handed to someone else since the last one.
            if (!lock.held()) return 4;
            lock.renew(20s);
            if (!locker.show("turns")) return 5;
            auto slot = locker.try_acquire_slot("sem-" + std::to_string(child), 2);
            if (!slot) return 6;
            locker.list("sem-");
            locker.purge_expired();
            slot->release();
            sqlock_test::leave_witness(witness);  // before the release
            lock.release();
        }
        // No wait was left to the 5 s safety net: a waiter that trusted a
        // notification through the pooler would have hung that long.
        return !bounded_waits || longest < 4s ? 0 : 3;
    });
    out.ids = sqlock_test::read_ids(order);
    return out;
}

void check_turns(const Turns& t) {
    CHECK(t.codes == std::vector<int>(4, 0));
    CHECK(t.ids.size() == 40u);
    // Strictly increasing: the advisory lock keeps ids in acquisition order.
    CHECK(std::adjacent_find(t.ids.begin(), t.ids.end(), std::greater_equal<>()) == t.ids.end());
}

}  // namespace

TEST_CASE("pooler=transaction: processes take turns, ids in order, waits polled", "[pooler]") {
    auto db = fresh_database();
    REQUIRE(db.url.find("pooler=transaction") != std::string::npos);
    check_turns(take_turns(db.url, db.table, "explicit"));
    CHECK(db.open().list().empty());
}

TEST_CASE("a transaction pooler not named in the URL is recognised by its symptoms", "[pooler]") {
    // Without the parameter, prepared statements meet other server sessions
    // (42P05 / 26000): the connection must switch to unnamed statements and
    // carry on instead of failing the operation.
    // Waits are not bounded here: until a process meets the first symptom,
    // its waiters may rely on a LISTEN that hears nothing, and only notice a
    // release at the 5 s re-check (the reason to put pooler= in the URL).
    auto db = fresh_database();
    check_turns(take_turns(without_pooler(db.url), db.table, "detected", false));
    CHECK(db.open().list().empty());
}

TEST_CASE("pooler=statement: init and every operation work without transactions",
          "[pooler][needs:pgbouncer-statement]") {
    const std::string url = env("SQLOCK_TEST_PGBOUNCER_STATEMENT_URL");
    // A table created through the statement pooler: init must not need
    // BEGIN/COMMIT, which statement mode refuses.
    const std::string table = pg_test::unique("stmt");
    sqlock::Locker(url, locker_options().table(table)).init();
    check_turns(take_turns(url, table, "statement"));
}

TEST_CASE("the pooler parameter is checked and never reaches libpq", "[pooler]") {
    auto db = fresh_database();
    auto category_of = [](const std::function<void()>& f) {
        try {
            f();
        } catch (const sqlock::error& e) {
            CHECK_FALSE(pg_test::leaks_password(e.what()));
            return e.category();
        }
        return sqlock::errc::backend;
    };
    const std::string bare = without_pooler(db.url);
    CHECK(category_of([&] {
              sqlock::Locker(bare + "?pooler=bouncy", locker_options().table(db.table));
          }) == sqlock::errc::invalid_argument);
    CHECK(category_of([&] {
              sqlock::Locker(bare + "?pooler=session&pooler=transaction",
                             locker_options().table(db.table));
          }) == sqlock::errc::invalid_argument);
    // Taken out wherever it stands among libpq's own parameters.
    sqlock::Locker middle(bare + "?connect_timeout=10&pooler=transaction&application_name=x",
                          locker_options().table(db.table));
    CHECK(middle.try_lock("middle"));
}

TEST_CASE("doctor points out a transaction pooler the URL does not name", "[pooler]") {
    auto db = fresh_database();
    sqlock::Locker unnamed(without_pooler(db.url), locker_options().table(db.table));
    const sqlock::Diagnosis d = sqlock::diagnose(unnamed);
    REQUIRE(d.problems.size() == 1);
    CHECK(d.problems[0].find("add pooler=transaction") != std::string::npos);
    CHECK_FALSE(pg_test::leaks_password(d.problems[0]));
    // Named in the URL, it is the expected path: no problem, waiters poll.
    const sqlock::Diagnosis named = sqlock::diagnose(db.open());
    CHECK(named.problems.empty());
    bool polled = false, scans_named = false;
    for (const auto& f : named.facts) {
        if (f.key == "wake-ups") polled = f.value.rfind("polled", 0) == 0;
        // Nothing can be set through the pooler: the fact says what to do.
        if (f.key == "sequential scans")
            scans_named = f.value.find("SET enable_seqscan = off") != std::string::npos &&
                          f.value.rfind("possible", 0) == 0;
    }
    CHECK(polled);
    CHECK(scans_named);
}

TEST_CASE("through a transaction pooler, statements are kept on the server sessions, not re-sent",
          "[pooler][needs:server-script][needs:server-dir]") {
    // Each statement is prepared once on a server session the pooler lends
    // and then run there by name (the hot path's by the protocol, the others
    // by EXECUTE), not parsed and planned again as an unnamed statement on
    // every call. The role sqlock_logged has its statements logged.
    auto db = fresh_database();
    REQUIRE(db.url.find("pooler=transaction") != std::string::npos);
    const std::string app = pg_test::unique("kept");
    const std::string prefix = "app=" + app + " ";
    const std::size_t log_start = pg_test::server_log_size();
    const int cycles = 20;
    {
        sqlock::Locker locker = pg_test::logged_locker(db, app);
        sqlock::LockOptions plain = lock_options().heartbeat(false);
        sqlock::LockOptions shared = plain;
        shared.mode = sqlock::lock_mode::shared;
        for (int i = 0; i < cycles; ++i) {
            auto lock = locker.try_lock("kept", plain);
            REQUIRE(lock);
            lock->renew(30s);
            lock->release();
            auto slot = locker.try_acquire_slot("kept-sem", 3, plain);
            REQUIRE(slot);
            slot->release();
            auto reader = locker.try_lock("kept-shared", shared);
            REQUIRE(reader);
            reader->renew(30s);
            reader->release();
        }
    }
    const std::string log = pg_test::server_log(log_start);
    INFO("server log lines of this test's connection: " << pg_test::count(log, prefix));
    // The hot path's statements, bound by name: a server session's first
    // use prepares in the same round trip (a pipeline), and runs the same.
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_gated/") == cycles);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_delete_exact/") == 2 * cycles);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_slot_gated/") == cycles);
    // The rest by EXECUTE, each call one simple query. Where the lent
    // server session did not have the statement yet, the EXECUTE failed
    // (26000, nothing ran) and PREPARE and EXECUTE went in one message: so
    // one EXECUTE first line per call, and a PREPARE per server session
    // (one, here, where nothing else uses the pool, or a few at most).
    auto executes = [&](const std::string& key) {
        return pg_test::count(log, prefix + "LOG:  statement: EXECUTE \"" + key + "/");
    };
    auto prepares = [&](const std::string& key) {
        return pg_test::count(log, prefix + "LOG:  statement: PREPARE \"" + key + "/");
    };
    CHECK(executes("sqlock_renew") == cycles);
    CHECK(prepares("sqlock_renew") >= 1);
    CHECK(prepares("sqlock_renew") <= 3);
    CHECK(executes("sqlock_acquire_shared_queued") == cycles);
    CHECK(prepares("sqlock_acquire_shared_queued") <= 3);
    // A shared hold's renewal and release: its turn, then the work kept
    // (the statement's further lines follow, indented); the work was never
    // sent as text.
    CHECK(pg_test::count(log, "\n\tEXECUTE \"sqlock_renew_shared/") >= std::size_t(cycles));
    CHECK(pg_test::count(log, "\n\tEXECUTE \"sqlock_release_shared/") >= std::size_t(cycles));
    const std::string quoted = "\"" + db.table + "\"";
    CHECK(pg_test::count(log,
                         "\n\tWITH o(id, lockstring, created, expires, locked_by, seconds_left,"
                         " until) AS (UPDATE " +
                             quoted) == 0);
    CHECK(pg_test::count(log, "\n\tWITH k AS (UPDATE " + quoted) == 0);
    // Nothing of the lock's was sent unnamed.
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: WITH") == 0);
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: INSERT") == 0);
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: UPDATE") == 0);
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: DELETE") == 0);
}

TEST_CASE("through a transaction pooler, a table made by another program needs nothing added",
          "[pooler]") {
    // The statements are kept in the server sessions, not in the schema: a
    // lock table with DBIx::Locker's columns alone (no side tables, no
    // function beside it), made by its owner, works as it is.
    const std::string table = pg_test::unique("bare");
    pg_test::create_bare_table(without_pooler(pg_test::url()), table);
    sqlock::LockerOptions options = locker_options().table(table).pool_size(1);
    options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    sqlock::Locker locker(pg_test::url(), options);
    sqlock::LockOptions plain = lock_options().heartbeat(false);
    long long last = 0;
    for (int i = 0; i < 5; ++i) {
        auto lock = locker.try_lock("bare", plain);
        REQUIRE(lock);
        CHECK(lock->id() > last);
        last = lock->id();
        REQUIRE(locker.show("bare"));
        lock->renew(10s);
        CHECK(lock->held());
        lock->release();
        CHECK_FALSE(locker.show("bare"));
    }
    CHECK(pg_test::query(without_pooler(pg_test::url()), "SELECT count(*) FROM " + table) == "0");
}

TEST_CASE("through a transaction pooler, a table made again with other column types still works",
          "[pooler]") {
    // The server sessions keep the statements' plans; a table dropped and
    // made again with another column type makes those plans stale
    // ("cached plan must not change result type"): each is dropped where it
    // is met, and made anew.
    const std::string table = pg_test::unique("remade");
    const std::string direct = without_pooler(pg_test::url());
    auto make = [&](const std::string& locked_by_type) {
        pg_test::create_bare_table(direct, table, locked_by_type);
    };
    sqlock::LockerOptions options = locker_options().table(table).pool_size(1);
    options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    sqlock::Locker locker(pg_test::url(), options);
    sqlock::LockOptions plain = lock_options().heartbeat(false);
    auto cycle = [&] {
        auto lock = locker.try_lock("remade", plain);
        REQUIRE(lock);
        lock->renew(10s);  // its row's columns: locked_by among them
        REQUIRE(locker.show("remade"));
        lock->release();
    };
    make("text");
    for (int i = 0; i < 3; ++i) cycle();
    make("varchar(1024)");
    for (int i = 0; i < 3; ++i) cycle();
}

namespace {

// The first line of `log` holding both `a` and `b` ("" if none).
std::string first_line_with(const std::string& log, const std::string& a, const std::string& b) {
    std::size_t start = 0;
    while (start < log.size()) {
        std::size_t end = log.find('\n', start);
        if (end == std::string::npos) end = log.size();
        const std::string line = log.substr(start, end - start);
        if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return line;
        start = end + 1;
    }
    return "";
}

}  // namespace

TEST_CASE("through a transaction pooler, a connection binds only the statements it has prepared",
          "[pooler][needs:server-script][needs:server-dir]") {
    // PgBouncer 1.21 and later keep each client's prepared statements and
    // close a client connection that binds a name it never prepared: a
    // connection's first use of each statement prepares it, in the pipeline
    // that runs it, and binds only after. On a fresh table no server session
    // holds the statements yet, so a bind first would fail there (26000,
    // "does not exist", in the server log); a server session that holds
    // them already refuses the preparation (42P05, "already exists").
    auto db = fresh_database();
    const std::size_t log_start = pg_test::server_log_size();
    sqlock::LockOptions plain = lock_options().heartbeat(false);
    auto first_calls = [&](const std::string& app) {
        sqlock::Locker locker = pg_test::logged_locker(db, app);
        auto lock = locker.try_lock("first", plain);
        REQUIRE(lock);
        lock->release();
        auto slot = locker.try_acquire_slot("first-sem", 2, plain);
        REQUIRE(slot);
        slot->release();
    };
    const std::string first = pg_test::unique("first"), second = pg_test::unique("second");
    first_calls(first);
    first_calls(second);
    const std::string log = pg_test::server_log(log_start);
    const char* const hot[] = {"sqlock_acquire_gated/", "sqlock_delete_exact/",
                               "sqlock_acquire_slot_gated/"};
    for (const char* name : hot) {
        // What the server first said of each name answered a preparation,
        // never a bind: where none had it (the first connection), it ran;
        // else it ran, or the session had it.
        const std::string said_first = first_line_with(log, "app=" + first + " ", name);
        const std::string said_second = first_line_with(log, "app=" + second + " ", name);
        INFO(name << ": " << said_first << "\n" << said_second);
        CHECK(said_first.find("LOG:  execute " + std::string(name)) != std::string::npos);
        CHECK_FALSE(said_second.empty());
        CHECK(said_second.find("does not exist") == std::string::npos);
    }
    // Each ran once a call.
    const std::string prefix = "app=" + first + " ";
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_gated/") == 1);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_delete_exact/") == 2);
    CHECK(pg_test::count(log, prefix + "LOG:  execute sqlock_acquire_slot_gated/") == 1);
}

TEST_CASE("through a transaction pooler, an error at commit leaves the connection ready",
          "[pooler]") {
    // A constraint trigger deferred to commit fails the statement after its
    // result came: with a serialization failure, which sqlock sends again,
    // and with a refusal, which the call reports. Either way, on a
    // statement's first use (the pipeline that prepares and runs it), the
    // whole answer must be read: a connection left in pipeline mode would
    // make its next call wait all of db_timeout for an answer, then drop
    // the connection.
    auto db = fresh_database();
    const std::string direct = without_pooler(db.url);
    const std::string t = db.table;
    pg_test::query(direct, "CREATE SEQUENCE " + t + "_race; CREATE SEQUENCE " + t +
                               "_refusal;"
                               " CREATE FUNCTION " +
                               t +
                               "_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                               " IF NEW.lockstring = 'race-at-commit' AND nextval('" +
                               t +
                               "_race') = 1 THEN RAISE EXCEPTION 'lost at commit'"
                               " USING ERRCODE = 'serialization_failure'; END IF;"
                               " IF NEW.lockstring LIKE 'refused-at-commit%' AND nextval('" +
                               t +
                               "_refusal') = 1 THEN RAISE EXCEPTION 'refused at commit'"
                               " USING ERRCODE = 'check_violation'; END IF;"
                               " RETURN NULL; END $$;"
                               " CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON " +
                               t + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " +
                               t + "_at_commit()");
    const auto db_timeout = 20s;
    sqlock::Locker locker(db.url, locker_options().table(t).pool_size(1).db_timeout(db_timeout));
    sqlock::LockOptions plain = lock_options().heartbeat(false);
    // Seconds a call took, against half of db_timeout.
    const double most = std::chrono::duration<double>(db_timeout).count() / 2;
    auto timed = [](const std::function<void()>& f) {
        const auto asked = steady::now();
        f();
        return std::chrono::duration<double>(steady::now() - asked).count();
    };
    // Lost at commit, once: sent again on the same connection, at once.
    std::optional<sqlock::Lock> raced;
    CHECK(timed([&] { raced = locker.try_lock("race-at-commit", plain); }) < most);
    REQUIRE(raced);
    CHECK(pg_test::query(direct, "SELECT last_value FROM " + t + "_race") == "2");
    // Refused at commit: the call says so, and the connection (the pool's
    // one) serves the next call at once.
    CHECK(timed([&] {
              try {
                  locker.try_acquire_slot("refused-at-commit", 2, plain);
                  FAIL("the refusal at commit was not reported");
              } catch (const sqlock::error& e) {
                  CHECK(e.category() != sqlock::errc::connection);
                  CHECK(e.backend_code() == "23514");
              }
          }) < most);
    std::optional<sqlock::Lock> next;
    CHECK(timed([&] { next = locker.try_lock("after-refusal", plain); }) < most);
    CHECK(next);
    raced->release();
    if (next) next->release();
    CHECK(pg_test::query(direct, "SELECT count(*) FROM " + t) == "0");
}

TEST_CASE("through a transaction pooler, failing calls do not stop a connection keeping statements",
          "[pooler][needs:server-script][needs:server-dir]") {
    // Only a statement missing on the lent server session counts towards
    // giving up keeping them (64 in a row): a statement that fails for
    // another reason, here a read-only refusal as in a failover's window,
    // found its statement there.
    auto db = fresh_database();
    const std::string direct = without_pooler(db.url);
    const std::string t = db.table;
    pg_test::query(direct, "INSERT INTO " + t +
                               " (lockstring, expires, locked_by)"
                               " VALUES ('refused-purge', now() - interval '1 hour', 'test');"
                               " CREATE FUNCTION " +
                               t +
                               "_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                               " RAISE EXCEPTION 'read-only for now'"
                               " USING ERRCODE = 'read_only_sql_transaction'; END $$;"
                               " CREATE TRIGGER refuse BEFORE DELETE ON " +
                               t + " FOR EACH ROW EXECUTE FUNCTION " + t + "_refuse()");
    const std::string app = pg_test::unique("refused");
    const std::string prefix = "app=" + app + " ";
    const std::size_t log_start = pg_test::server_log_size();
    sqlock::Locker locker = pg_test::logged_locker(db, app);
    const int refusals = 70;
    int refused = 0;
    for (int i = 0; i < refusals; ++i) {
        try {
            locker.purge_expired();
        } catch (const sqlock::error& e) {
            if (e.backend_code() == "25006") ++refused;
        }
    }
    CHECK(refused == refusals);
    pg_test::query(direct, "DROP TRIGGER refuse ON " + t);
    CHECK(locker.purge_expired() == 1);
    const std::string log = pg_test::server_log(log_start);
    // Every call ran the kept statement by name, the last one too.
    CHECK(pg_test::count(log, prefix + "LOG:  statement: EXECUTE \"sqlock_purge") ==
          std::size_t(refusals + 1));
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: DELETE") == 0);
    CHECK(pg_test::count(log, prefix + "LOG:  execute <unnamed>: WITH") == 0);
}
