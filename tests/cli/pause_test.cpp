// `sqlock pause` and `sqlock resume`, on every backend: a pause
// stops every "host" (process), ends by itself with --for, lets a running
// job finish but stops the next run, and applies to --once-per windows.
#include <catch2/catch.hpp>
#include <list>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// A command that appends a line to `file`.
args_t recorder(const std::string& file) {
    return {"sh", "-c", "echo ran >> '" + file + "'"};
}

nlohmann::json list_json(const Cli& cli) {
    Result r = cli({"list", "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("a paused job runs on no host; resume lets it run again", "[cli][pause]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    Result paused = cli({"pause", "nightly", "--reason", "storage migration"});
    INFO(paused.err);
    REQUIRE(paused.code == 0);
    CHECK_THAT(paused.err, Contains("paused") && Contains("until resumed"));

    // Three "hosts" at once: each takes the lock in turn, finds the pause,
    // exits 80 and never runs the command.
    std::list<Process> hosts;
    for (int k = 0; k < 3; ++k)
        hosts.push_back(cli.start(with_command(
            {"run", "nightly", "--wait", "20s", "--label", "host-" + std::to_string(k)},
            recorder(ran))));
    for (auto& host : hosts) {
        Result r = host.wait(30s);
        INFO(r.err);
        CHECK(r.code == 80);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, Contains("'nightly' is paused by") && Contains("@") && Contains(" UTC") &&
                              Contains("storage migration") && Contains("not running"));
    }
    CHECK_FALSE(exists(ran));
    // --quiet: the code says it all.
    Result quiet = cli(with_command({"run", "nightly", "--quiet"}, recorder(ran)));
    CHECK(quiet.code == 80);
    CHECK(quiet.err.empty());
    CHECK_FALSE(exists(ran));
    // The lock was released each time.
    CHECK(cli({"show", "nightly"}).code == 1);

    // `list` shows it, in text and JSON; other jobs are not paused.
    Result text = cli({"list"});
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Contains("PAUSED") && Contains("nightly") && Contains("storage"));
    auto json = list_json(cli);
    REQUIRE(json.size() == 1);
    CHECK(json[0]["name"] == "nightly");
    CHECK(json[0]["paused"]["reason"] == "storage migration");
    CHECK(json[0]["paused"]["until"].is_null());
    CHECK(cli(with_command({"run", "other"}, recorder(dir + "/other"))).code == 0);
    CHECK(count_lines(dir + "/other") == 1);

    Result resumed = cli({"resume", "nightly"});
    CHECK(resumed.code == 0);
    CHECK_THAT(resumed.err, Contains("resumed"));
    CHECK(cli(with_command({"run", "nightly"}, recorder(ran))).code == 0);
    CHECK(count_lines(ran) == 1);
    CHECK(list_json(cli).empty());

    // Resuming what is not paused says so, exit 1.
    Result again = cli({"resume", "nightly"});
    CHECK(again.code == 1);
    CHECK(again.err_lines() == 1);
    CHECK_THAT(again.err, Contains("'nightly' was not paused"));
}

TEST_CASE("a pause with --for ends by itself", "[cli][pause][expiry]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    // Long enough that the two commands below (each a new process, slow
    // under a sanitizer on a loaded machine: 1.5 s once was not) run
    // inside it.
    Result paused = cli({"pause", "job", "--for", "5s"});
    REQUIRE(paused.code == 0);
    CHECK_THAT(paused.err, Contains(" UTC until "));
    auto json = list_json(cli);
    REQUIRE(json.size() == 1);
    CHECK(json[0]["paused"]["until"].is_string());
    CHECK(cli(with_command({"run", "job"}, recorder(ran))).code == 80);
    // Until it ends, every attempt is turned away; then one runs.
    CHECK(eventually(
        [&] {
            return cli(with_command({"run", "job"}, recorder(ran))).code == 0;
        },
        30s));
    CHECK(count_lines(ran) == 1);
    CHECK(list_json(cli).empty());
    CHECK(cli({"resume", "job"}).code == 1);  // it has ended: nothing to resume
}

TEST_CASE("reap deletes the pauses that have ended; a dry run only counts them",
          "[cli][pause][reap]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"pause", "long", "--for", "1h"}).code == 0);
    REQUIRE(cli({"pause", "forever"}).code == 0);
    const std::string rows_sql = "SELECT name FROM " + cli.db.table + "_pauses ORDER BY name";
    auto rows = [&] {
        std::vector<std::string> names;
        for (const auto& row : sqlock_test::query(cli.db, rows_sql))
            names.push_back(row.at(0).value_or("NULL"));
        return names;
    };
    auto dry_json = [&] {
        Result r = cli({"reap", "--dry-run", "--json"});
        INFO(r.err);
        REQUIRE(r.code == 0);
        return nlohmann::json::parse(r.out);
    };
    CHECK(dry_json()["pauses_would_delete"] == 0);
    // Then one that ends soon; the database's clock decides when it has
    // (no check before that: how soon is the machine's business).
    REQUIRE(cli({"pause", "short", "--for", "1s"}).code == 0);
    REQUIRE(eventually([&] { return dry_json()["pauses_would_delete"] == 1; }, 15s));
    auto dry = dry_json();
    CHECK(dry["dry_run"] == true);
    CHECK(dry["pauses_deleted"] == 0);
    Result text = cli({"reap", "--dry-run"});
    CHECK(text.code == 0);
    CHECK_THAT(text.err,
               Catch::Matchers::StartsWith("sqlock: would delete 0 expired locks and 1 expired "
                                           "pause ["));
    CHECK(rows() == std::vector<std::string>{"forever", "long", "short"});  // nothing deleted

    Result reaped = cli({"reap", "--json"});
    INFO(reaped.err);
    REQUIRE(reaped.code == 0);
    auto j = nlohmann::json::parse(reaped.out);
    CHECK(j["pauses_deleted"] == 1);
    CHECK_FALSE(j.contains("pauses_would_delete"));
    CHECK(rows() == std::vector<std::string>{"forever", "long"});
    // Nothing left: the line says only the locks.
    Result again = cli({"reap"});
    CHECK(again.code == 0);
    CHECK_THAT(again.err, Catch::Matchers::StartsWith("sqlock: deleted 0 expired locks ["));
    // The text line of a real run, with one more that ended.
    REQUIRE(cli({"pause", "brief", "--for", "1s"}).code == 0);
    REQUIRE(eventually([&] { return dry_json()["pauses_would_delete"] == 1; }, 15s));
    Result line = cli({"reap"});
    CHECK_THAT(line.err, Catch::Matchers::StartsWith(
                             "sqlock: deleted 0 expired locks and 1 expired pause ["));
    CHECK(rows() == std::vector<std::string>{"forever", "long"});
    CHECK(list_json(cli).size() == 2);
}

TEST_CASE("a pause issued while the job runs lets it finish and stops the next run",
          "[cli][pause]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    Process holder = cli.start(with_command({"run", "job"}, blocking_command(witness, go)));
    REQUIRE(wait_for_file(witness));
    // Another host waits for the lock meanwhile: it checks after taking it.
    Process waiter = cli.start(with_command({"run", "job", "--wait", "30s"}, recorder(dir + "/w")));
    REQUIRE(cli({"pause", "job", "--reason", "deploy"}).code == 0);
    touch(go);
    Result done = holder.wait(30s);
    INFO(done.err);
    CHECK(done.code == 0);  // not disturbed
    Result waited = waiter.wait(30s);
    INFO(waited.err);
    CHECK(waited.code == 80);
    CHECK_FALSE(exists(dir + "/w"));
    CHECK(cli(with_command({"run", "job"}, blocking_command(witness, go))).code == 80);
    CHECK(count_lines(witness) == 1);
}

TEST_CASE("a paused --once-per window is not run and not marked done", "[cli][pause][once-per]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    REQUIRE(cli({"pause", "nightly"}).code == 0);
    CHECK(cli(with_command({"run", "nightly", "--once-per", "300d"}, recorder(ran))).code == 80);
    CHECK_FALSE(exists(ran));
    Result history = cli({"history", "nightly", "--json"});
    REQUIRE(history.code == 0);
    CHECK(nlohmann::json::parse(history.out).empty());
    REQUIRE(cli({"resume", "nightly"}).code == 0);
    CHECK(cli(with_command({"run", "nightly", "--once-per", "300d"}, recorder(ran))).code == 0);
    CHECK(cli(with_command({"run", "nightly", "--once-per", "300d"}, recorder(ran))).code == 0);
    CHECK(count_lines(ran) == 1);
}

TEST_CASE("pause and resume: bad input is a one-line usage error (64)", "[cli][pause][usage]") {
    Cli cli = fresh_cli();
    for (const args_t& args : std::vector<args_t>{
             {"pause"},
             {"pause", ""},
             {"pause", "a", "b"},
             {"pause", "bad\xffname"},
             {"pause", std::string(200, 'x')},
             {"pause", "job", "--for", "0"},
             {"pause", "job", "--for", "-5m"},
             {"pause", "job", "--for", "soon"},
             {"pause", "job", "--for", "400d"},
             {"pause", "job", "--reason", std::string(1025, 'r')},
             {"pause", "job", "--bogus"},
             {"resume"},
             {"resume", ""},
             {"resume", "a", "b"},
         }) {
        Result r = cli(args);
        INFO(args[0] << " " << (args.size() > 1 ? args[1] : ""));
        INFO(r.err);
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
    }
    CHECK(list_json(cli).empty());
}

TEST_CASE("a lock table without its pauses table: run works, pause asks for init",
          "[cli][pause][upgrade]") {
    Cli cli = fresh_cli();
    // A table made before sqlock had pauses.
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_pauses");
    const std::string ran = make_dir() + "/ran";
    Result plain = cli(with_command({"run", "job"}, recorder(ran)));
    INFO(plain.err);
    CHECK(plain.code == 0);
    CHECK(plain.err.empty());
    CHECK(count_lines(ran) == 1);
    CHECK(cli({"list"}).code == 0);
    // The reaper too: no pauses table, no pauses to delete.
    Result reaped = cli({"reap"});
    INFO(reaped.err);
    CHECK(reaped.code == 0);
    CHECK_THAT(reaped.err, Catch::Matchers::StartsWith("sqlock: deleted 0 expired locks ["));
    Result dry = cli({"reap", "--dry-run", "--json"});
    CHECK(dry.code == 0);
    CHECK(nlohmann::json::parse(dry.out)["pauses_would_delete"] == 0);
    Result pause = cli({"pause", "job"});
    CHECK(pause.code == 78);
    CHECK(pause.err_lines() == 1);
    CHECK_THAT(pause.err, Contains("sqlock init"));
    CHECK(cli({"init"}).code == 0);
    CHECK(cli({"pause", "job"}).code == 0);
    CHECK(cli(with_command({"run", "job"}, recorder(ran))).code == 80);
    CHECK(count_lines(ran) == 1);
}

TEST_CASE("a pause is kept when the run cannot be recorded", "[cli][pause][history]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    REQUIRE(cli({"pause", "job", "--reason", "upgrade"}).code == 0);
    // No history table: the start cannot be recorded, so the pause is read
    // alone, and still stops the job.
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_runs");
    Result r = cli(with_command({"run", "job"}, recorder(ran)));
    INFO(r.err);
    CHECK(r.code == 80);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Contains("'job' is paused by") && Contains("upgrade"));
    CHECK_FALSE(exists(ran));
}

TEST_CASE("a pause that cannot be read stops the job, with both errors", "[cli][pause][history]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    // A pauses table without the columns sqlock reads: neither the
    // combined start nor the pause alone can be read.
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_pauses");
    sqlock_test::exec_sql(
        cli.db, "CREATE TABLE " + cli.db.table + "_pauses (name VARCHAR(100) PRIMARY KEY)");
    Result r = cli(with_command({"run", "job"}, recorder(ran)));
    INFO(r.err);
    CHECK(r.code != 0);
    CHECK(r.code != 80);
    CHECK_THAT(r.err, Contains("checking whether it is paused") && Contains("before that: ") &&
                          Contains("reading the pause and recording the start of a run of 'job'"));
    CHECK_FALSE(exists(ran));
}
