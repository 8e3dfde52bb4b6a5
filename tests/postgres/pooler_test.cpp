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
