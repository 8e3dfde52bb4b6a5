// SQLOCK_GUARD: a job's own database client (psql, mariadb, sqlite3) makes
// its transaction commit only while the run holds its lock, so a run that is
// stopped past its lease cannot commit a stale write after a take-over.
#include <signal.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

namespace {

// The job: waits for "$1/go-$2", then writes "$2" into the table $3 in one
// guarded transaction through the backend's own client, leaving the
// client's exit status in "$1/$2.status" and its stderr in "$1/$2.err".
args_t guarded_writer(const std::string& dir, const std::string& who, const std::string& table,
                      const std::string& client) {
    return {"sh",
            "-c",
            "touch \"$1/$2.started\"\n"
            "until [ -e \"$1/go-$2\" ]; do sleep 0.02; done\n"
            "APP_SQL=\"BEGIN; $SQLOCK_GUARD; INSERT INTO $3 (who) VALUES ('$2'); COMMIT;\"\n"
            "export APP_SQL\n" +
                client +
                " >\"$1/$2.out\" 2>\"$1/$2.err\"\n"
                "echo $? > \"$1/$2.status\"",
            "sh",
            dir,
            who,
            table};
}

struct Setup {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    std::string table;
    std::string client;
    env_t env;

    Setup() {
        const auto command = sqlock_test::backend_context().hooks.client_command;
        if (!command) FAIL("no client_command hook for " << sqlock_test::backend());
        const auto client_command = command(cli.db.url);
        client = client_command.shell;
        for (const auto& [name, value] : client_command.env) env[name] = value;
        table = cli.db.table + "_data";
        sqlock_test::exec_sql(cli.db, "CREATE TABLE " + table + " (who VARCHAR(64))");
    }

    std::multiset<std::string> writers() const {
        std::multiset<std::string> out;
        for (const auto& row : sqlock_test::query(cli.db, "SELECT who FROM " + table))
            out.insert(row.at(0).value_or("NULL"));
        return out;
    }

    std::string status(const std::string& who) const {
        REQUIRE(wait_for_file(dir + "/" + who + ".status"));
        std::string s = read_file(dir + "/" + who + ".status");
        return s.substr(0, s.find('\n'));
    }
};

}  // namespace

TEST_CASE("a job's guarded write commits while its run holds the lock", "[cli][guard]") {
    Setup s;
    touch(s.dir + "/go-only");
    Result r =
        s.cli(run_args("ledger", {}, guarded_writer(s.dir, "only", s.table, s.client)), s.env);
    INFO(read_file(s.dir + "/only.err"));
    CHECK(r.code == 0);
    CHECK(s.status("only") == "0");
    CHECK(s.writers() == std::multiset<std::string>{"only"});
}

TEST_CASE("SQLOCK_GUARD carries a name with quotes and backslashes", "[cli][guard]") {
    // Written into the statement as literals (PostgreSQL's E'' with the
    // backslash doubled, MariaDB's hex, SQLite's doubled quote): the name
    // must arrive as it is, and the error must name it.
    Setup s;
    const std::string name = "it's a \\back'slash\\";
    touch(s.dir + "/go-odd");
    Result r = s.cli(run_args(name, {}, guarded_writer(s.dir, "odd", s.table, s.client)), s.env);
    INFO(read_file(s.dir + "/odd.err"));
    CHECK(r.code == 0);
    CHECK(s.status("odd") == "0");
    CHECK(s.writers() == std::multiset<std::string>{"odd"});
}

TEST_CASE("a stopped run's job cannot write after a take-over", "[cli][guard]") {
    Setup s;
    Process first = s.cli.start(
        run_args("ledger", {"--expires", "1s"}, guarded_writer(s.dir, "first", s.table, s.client)),
        s.env);
    REQUIRE(wait_for_file(s.dir + "/first.started"));
    // The run (not its job) is stopped: no heartbeat renews its lease.
    first.signal(SIGSTOP);
    auto locker = s.cli.db.open();
    REQUIRE(sqlock_test::eventually([&] {
        auto info = locker.show("ledger");
        return info && info->expired();
    }));
    touch(s.dir + "/go-second");
    Result second =
        s.cli(run_args("ledger", {}, guarded_writer(s.dir, "second", s.table, s.client)), s.env);
    CHECK(second.code == 0);
    CHECK(s.status("second") == "0");

    // The first job wakes up and writes: its guard refuses, naming the lock.
    touch(s.dir + "/go-first");
    CHECK(s.status("first") != "0");
    const std::string refusal = read_file(s.dir + "/first.err");
    INFO(refusal);
    // Through PgBouncer in statement mode the failed transaction is still
    // open when the message ends, and the pooler may close the connection
    // saying so before psql prints the guard's error: refused either way.
    const bool statement_pooled = s.cli.db.url.find("pooler=statement") != std::string::npos;
    CHECK((refusal.find("lock \"ledger\" is no longer held") != std::string::npos ||
           (statement_pooled &&
            refusal.find("not allowed in statement pooling mode") != std::string::npos)));
    first.signal(SIGCONT);
    first.wait(30s);
    CHECK(s.writers() == std::multiset<std::string>{"second"});
}

TEST_CASE("a job that ignores SQLOCK_GUARD writes as before", "[cli][guard]") {
    Setup s;
    Result r = s.cli(run_args("ledger", {},
                              {"sh", "-c",
                               "APP_SQL=\"INSERT INTO $1 (who) VALUES ('unguarded')\"; export "
                               "APP_SQL; " +
                                   s.client,
                               "sh", s.table}),
                     s.env);
    CHECK(r.code == 0);
    CHECK(s.writers() == std::multiset<std::string>{"unguarded"});
}

TEST_CASE("elect gives its job SQLOCK_GUARD too", "[cli][guard]") {
    Setup s;
    touch(s.dir + "/go-leader");
    Process leader = s.cli.start(
        with_command({"elect", "svc", "--value", "a"},
                     {"sh", "-c",
                      "sh -c \"$0\" sh \"$1\" leader \"$2\"; touch \"$1/done\"; "
                      "while :; do sleep 0.05; done",
                      guarded_writer(s.dir, "leader", s.table, s.client)[2], s.dir, s.table}),
        s.env);
    REQUIRE(wait_for_file(s.dir + "/done"));
    INFO(read_file(s.dir + "/leader.err"));
    CHECK(s.status("leader") == "0");
    leader.signal(SIGTERM);
    leader.wait(30s);
    CHECK(s.writers() == std::multiset<std::string>{"leader"});
}
