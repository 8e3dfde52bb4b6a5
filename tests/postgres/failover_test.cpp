// Failover: a primary (testing/server.sh) and a streaming standby made with
// pg_basebackup (testing/standby.sh), reached through one multi-host URL
// with target_session_attrs=read-write. Locks are held, waited for and
// released across `pg_ctl promote`:
//   - synchronous replication, primary crashed (stop -m immediate): every
//     lock held survives, including one taken just before the crash;
//   - asynchronous replication, planned switchover (stop -m fast, which sends
//     all WAL to the standby first): the same.
// Both check mutual exclusion with a witness, that no fencing id repeats or
// decreases, and that a URL naming only the standby gives a configuration
// error at once. A third case runs `sqlock run` across a crash of a
// synchronous primary: its renewals reach the new primary and the job is
// never stopped. Each case starts its own two clusters (about 10 s).
//
// Needs $SQLOCK_TEST_PG_SCRIPT (the scripts' directory is taken from it).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include "pg_test.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using sqlock_test::lock_options;
using sqlock_test::locker_options;
using sqlock_test::spawn_options;

namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string scripts_dir() {
    std::string script = env("SQLOCK_TEST_PG_SCRIPT");
    return script.substr(0, script.rfind('/'));
}

// Runs a script (fork+exec of a shell, no fork of this threaded process'
// image) and returns its stdout without the trailing newline. The scripts
// bound their own waits (pg_ctl -t 60).
std::string run(const std::string& command) {
    FILE* p = popen(command.c_str(), "r");
    if (!p) throw std::runtime_error("popen failed");
    std::string out;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    int status = pclose(p);
    if (status != 0) throw std::runtime_error("failed: " + command);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// A primary and its standby; stopped and removed whatever happens.
struct Pair {
    std::string primary_dir, standby_dir;
    std::string primary_url, standby_url, multi_url, password;

    explicit Pair(const std::string& mode) {
        char p[] = "/tmp/sqlock-failover-p-XXXXXX";
        char s[] = "/tmp/sqlock-failover-s-XXXXXX";
        if (!mkdtemp(p) || !mkdtemp(s)) throw std::runtime_error("mkdtemp failed");
        primary_dir = p;
        standby_dir = s;
        rmdir(s);  // standby.sh makes it
        std::string port;
        try {
            primary_url = run(scripts_dir() + "/server.sh start " + primary_dir);
            port = run(scripts_dir() + "/standby.sh start " + standby_dir + " " + primary_dir +
                       " " + mode);
        } catch (...) {
            stop();
            throw;
        }
        standby_url = sqlock_test::with_port(primary_url, std::stoi(port));
        password = sqlock_test::password_of(primary_url);
        const std::size_t slash = primary_url.find('/', primary_url.find('@'));
        multi_url = primary_url.substr(0, slash) + ",127.0.0.1:" + port +
                    primary_url.substr(slash) + "?target_session_attrs=read-write";
    }
    ~Pair() { stop(); }
    void stop() noexcept {
        // Best effort: a failure here must not hide the test's own.
        for (const std::string& c : {scripts_dir() + "/standby.sh stop " + standby_dir,
                                     scripts_dir() + "/server.sh stop " + primary_dir})
            if (std::system((c + " >/dev/null 2>&1").c_str()) != 0) {
            }
    }
    void fail_over(const char* how) {
        run(scripts_dir() + "/standby.sh crash " + primary_dir + " " + how);
        run(scripts_dir() + "/standby.sh promote " + standby_dir);
    }
};

// `f()` again while it fails with errc::connection (the failover window),
// for up to 30 s.
template <typename F>
auto through_failover(F&& f) -> decltype(f()) {
    const auto deadline = steady::now() + 30s;
    for (;;) {
        try {
            return f();
        } catch (const sqlock::error& e) {
            if (e.category() != sqlock::errc::connection || steady::now() > deadline) throw;
            std::this_thread::sleep_for(50ms);
        }
    }
}

void check_standby_refuses(const Pair& pair, const std::string& table) {
    sqlock::Locker on_standby(pair.standby_url, locker_options().table(table));
    const auto start = steady::now();
    try {
        on_standby.try_lock("anything");
        FAIL("a lock was taken on a read-only standby");
    } catch (const sqlock::error& e) {
        std::string msg = e.what();
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK(msg.find("read-only") != std::string::npos);
        CHECK(msg.find(pair.password) == std::string::npos);
    }
    // At once, not after a retry loop (generous: one round trip really).
    CHECK(steady::now() - start < 10s);
    const auto d = sqlock::diagnose(on_standby);
    REQUIRE(d.problems.size() >= 1);
    CHECK(d.problems[0].find("read-only") != std::string::npos);
}

// The tests that call it declare [needs:server-script]: the pair is started
// by the test server's script.
void failover_keeps_locks(const std::string& mode, const char* how) {
    Pair pair(mode);
    const std::string table = "failover";
    sqlock::Locker locker(pair.multi_url, locker_options().table(table).pool_size(2));
    locker.init();

    // Ids before the failover: acquired and released in turn.
    long long max_id = 0;
    for (int i = 0; i < 20; ++i) {
        auto l = locker.lock("turns");
        CHECK(l.id() > max_id);
        max_id = l.id();
    }
    // The witness: true while someone holds "held" by our own account.
    std::atomic<bool> holding{true};
    auto held = locker.lock("held", lock_options().expires(10min));
    max_id = std::max<long long>(max_id, held.id());

    // A waiter on its own Locker, waiting across the failover: its wait
    // goes through the primary's end and the promotion by itself.
    sqlock::Locker other(pair.multi_url, locker_options().table(table));
    std::atomic<bool> overlap{false};
    auto waiter = std::async(std::launch::async, [&]() -> long long {
        auto l = other.lock("held", lock_options().expires(1min).wait(60s));
        if (holding.load()) overlap = true;
        return static_cast<long long>(l.id());
    });
    // Asleep once it has drawn an id for its first attempt.
    REQUIRE(sqlock_test::eventually(
        [&] { return pg_test::last_id_drawn(pair.primary_url, table) > held.id(); }, 10s));

    // The standby has replayed that far (it has the table, for the next check).
    REQUIRE(sqlock_test::eventually(
        [&] {
            try {
                return pg_test::query(pair.standby_url,
                                      "SELECT count(*) FROM failover WHERE id = " +
                                          std::to_string(held.id())) == "1";
            } catch (const std::exception&) {
                return false;  // asynchronous: the table may not be there yet
            }
        },
        10s));
    check_standby_refuses(pair, table);
    // The doctor on the primary: an asynchronous standby is a problem for
    // locks (a crash failover to it can lose them), a synchronous one is not.
    {
        const sqlock::Diagnosis d =
            sqlock::diagnose(sqlock::Locker(pair.primary_url, locker_options().table(table)));
        const bool warned = std::any_of(d.problems.begin(), d.problems.end(), [](const auto& p) {
            return p.find("from this primary asynchronously") != std::string::npos;
        });
        CHECK(warned == (mode == "async"));
    }

    // One lock taken just before the primary goes away: with synchronous
    // replication, its commit returned only once the standby had flushed it.
    std::optional<sqlock::Lock> last = locker.lock("last", lock_options().expires(10min));
    max_id = std::max<long long>(max_id, last->id());
    pair.fail_over(how);

    // Every lock held survived: same rows, same ids, still ours.
    auto row = through_failover([&] { return locker.show("held"); });
    REQUIRE(row);
    CHECK(row->id == held.id());
    CHECK(through_failover([&] { return held.held(); }));
    CHECK(through_failover([&] { return last->held(); }));
    // Still exclusive: nobody else gets it.
    sqlock::Locker third(pair.multi_url, locker_options().table(table));
    CHECK_FALSE(through_failover([&] { return third.try_lock("held").has_value(); }));

    // Released on the new primary, the waiter gets it, with a larger id.
    holding = false;
    through_failover([&] {
        held.release();
        return 0;
    });
    REQUIRE(waiter.wait_for(60s) == std::future_status::ready);
    const long long waiter_id = waiter.get();
    CHECK_FALSE(overlap.load());
    CHECK(waiter_id > max_id);
    max_id = waiter_id;
    // And ids keep growing on the new primary.
    for (int i = 0; i < 5; ++i) {
        auto l = through_failover([&] { return third.lock("turns", lock_options().wait(10s)); });
        CHECK(l.id() > max_id);
        max_id = l.id();
    }
    through_failover([&] {
        last->release();
        return 0;
    });
}

}  // namespace

TEST_CASE("synchronous standby promoted after a crash: every held lock survives",
          "[failover][needs:server-script]") {
    failover_keeps_locks("sync", "immediate");
}

TEST_CASE("asynchronous standby promoted after a clean switchover: locks survive",
          "[failover][needs:server-script]") {
    failover_keeps_locks("async", "fast");
}

#ifdef SQLOCK_CLI
TEST_CASE("sqlock run rides out a failover: renewals reach the new primary, nothing is stopped",
          "[failover][cli][needs:server-script]") {
    Pair pair("sync");
    const std::string table = "failover_run";
    sqlock::Locker(pair.multi_url, locker_options().table(table)).init();
    const std::string dir = sqlock_test::scratch_dir();
    const std::string stamps = dir + "/run-stamps", stop = dir + "/run-stop",
                      term = dir + "/run-term", err = dir + "/run-err";
    // A 20 s lease: renewals every ~3.3 s, and the job would be signalled
    // only 10 s after the last one; the crash and promotion take well under
    // a second here (the test says how long).
    std::vector<std::string> args = {
        SQLOCK_CLI,
        "--db",
        pair.multi_url,
        "--table",
        table,
        "run",
        "job",
        "--expires",
        "20s",
        "--",
        "/bin/sh",
        "-c",
        "trap 'echo TERM >> \"$3\"; exit 1' TERM; "
        "while [ ! -e \"$2\" ]; do date +%s%N >> \"$1\"; sleep 0.05; done",
        "job",
        stamps,
        stop,
        term};
    // The doctor names each host of the list: the primary and the standby
    // that streams from it, and the synchronous standby as the server has
    // it, quotes and all.
    const sqlock_test::Outcome doctor =
        sqlock_test::run({SQLOCK_CLI, "--db", pair.multi_url, "--table", table, "doctor"});
    INFO("doctor: " << doctor.out << doctor.err);
    CHECK(doctor.code == 0);
    const std::string primary_port = std::to_string(sqlock_test::port_of(pair.primary_url));
    const std::string standby_port = std::to_string(sqlock_test::port_of(pair.standby_url));
    CHECK_THAT(doctor.out, Catch::Matchers::Contains("host 127.0.0.1:" + primary_port + ":"));
    CHECK_THAT(doctor.out, Catch::Matchers::Contains(
                               "primary (read-write); standbys streaming from it: sqlock_standby"));
    CHECK_THAT(doctor.out, Catch::Matchers::Contains("host 127.0.0.1:" + standby_port + ":"));
    CHECK_THAT(doctor.out, Catch::Matchers::Contains("standby (in recovery, read-only)"));
    CHECK_THAT(doctor.out,
               Catch::Matchers::Contains("synchronous_standby_names = 'sqlock_standby'"));
    CHECK(doctor.out.find("\\x27") == std::string::npos);
    // Starting a program is safe from this process, which has threads.
    sqlock_test::Process job(args, {}, spawn_options().stderr_path(err));
    REQUIRE(sqlock_test::eventually([&] { return !sqlock_test::read_file(stamps).empty(); }, 20s));
    const std::string row_sql =
        "SELECT id || ' ' || expires FROM " + table + " WHERE lockstring = 'job'";
    const std::string before = pg_test::query(pair.primary_url, row_sql);
    REQUIRE_FALSE(before.empty());
    const std::string id = before.substr(0, before.find(' '));

    const auto cut = steady::now();
    pair.fail_over("immediate");
    const auto promoted = steady::now();

    // On the new primary: the same row (same id), and its expiry moves on,
    // so a renewal went through after the promotion.
    std::string after;
    REQUIRE(sqlock_test::eventually(
        [&] {
            try {
                after = pg_test::query(pair.standby_url, row_sql);
            } catch (const std::exception&) {
                return false;  // not promoted yet
            }
            return !after.empty() && after != before;
        },
        30s));
    CHECK(after.substr(0, after.find(' ')) == id);
    WARN("sqlock run across a failover: crash and promotion took "
         << std::chrono::duration_cast<std::chrono::milliseconds>(promoted - cut).count()
         << " ms, the first renewal on the new primary came "
         << std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - cut).count()
         << " ms after the crash (at most; polled)");
    // The job ran on through it all and ends when told.
    { std::ofstream(stop.c_str()); }
    const sqlock_test::Outcome end = job.finish(30s);
    INFO("sqlock's stderr: " << sqlock_test::read_file(err));
    CHECK(end.code == 0);
    CHECK(sqlock_test::read_file(term).empty());
    CHECK(pg_test::query(pair.standby_url,
                         "SELECT count(*) FROM " + table + " WHERE lockstring = 'job'") == "0");
}
#endif
