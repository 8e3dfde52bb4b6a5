// `sqlock check`: a monitoring plugin. Each exit code (0 OK,
// 1 WARNING, 2 CRITICAL, 3 UNKNOWN) in a scenario made for it, from real
// runs recorded by `sqlock run`, on every backend.
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using sqlock_test::eventually;

namespace {

// The first line of stdout: what the monitoring system shows.
std::string first_line(const std::string& out) {
    return out.substr(0, out.find('\n'));
}

Result check(const Cli& cli, const std::string& name, const std::string& max_age,
             const args_t& extra = {}) {
    args_t args = {"check", name, "--max-age", max_age};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args);
}

// `sqlock run NAME -- ...` that holds NAME until `go` exists.
args_t blocking_run(const std::string& name, const std::string& witness, const std::string& go) {
    args_t args = {"run", name, "--"};
    for (const auto& word : blocking_command(witness, go)) args.push_back(word);
    return args;
}

nlohmann::json check_json(const Cli& cli, const std::string& name, const std::string& max_age) {
    Result r = check(cli, name, max_age, {"--json"});
    INFO(r.out << r.err);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("check: OK (0) after a recent success, with performance data", "[cli][check]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
    Result r = check(cli, "backup", "1h");
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(first_line(r.out), StartsWith("SQLOCK OK - backup: last success ") &&
                                      Contains(" UTC (") && Contains(" ago), took ") &&
                                      Contains(" | age=") && Contains("s;;3600 duration="));

    auto j = check_json(cli, "backup", "1h");
    CHECK(j["status"] == "OK");
    CHECK(j["exit_code"] == 0);
    CHECK(j["name"] == "backup");
    CHECK(j["max_age_seconds"] == 3600);
    CHECK(j["last_success"]["outcome"] == "succeeded");
    CHECK(j["last_success_age_seconds"].get<double>() >= 0);
    CHECK(j["last_success_age_seconds"].get<double>() < 600);
    CHECK(j["last_finished"]["id"] == j["last_success"]["id"]);
    CHECK(j["running"].is_null());
    CHECK(j["paused"].is_null());
    CHECK_THAT(j["message"].get<std::string>(), StartsWith("SQLOCK OK - backup"));
}

TEST_CASE("check: WARNING (1) when the last run failed but a success is within DUR",
          "[cli][check]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
    SECTION("failed") {
        REQUIRE(cli({"run", "backup", "--", "sh", "-c", "exit 3"}).code == 3);
        Result r = check(cli, "backup", "1h");
        INFO(r.out << r.err);
        CHECK(r.code == 1);
        CHECK_THAT(first_line(r.out), StartsWith("SQLOCK WARNING - backup: last run failed "
                                                 "(exit 3) at ") &&
                                          Contains("; last success "));
        auto j = check_json(cli, "backup", "1h");
        CHECK(j["status"] == "WARNING");
        CHECK(j["last_finished"]["outcome"] == "failed");
        CHECK(j["last_finished"]["exit_status"] == 3);
    }
    SECTION("killed") {
        REQUIRE(cli({"run", "backup", "--", "sh", "-c", "kill -KILL $$"}).code == 128 + 9);
        Result r = check(cli, "backup", "1h");
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_THAT(first_line(r.out), Contains("last run was killed (SIGKILL)"));
    }
    SECTION("timed out") {
        REQUIRE(cli(run_args("backup", {"--max-runtime", "200ms"}, {"sleep", "60"})).code == 124);
        Result r = check(cli, "backup", "1h");
        INFO(r.out);
        CHECK(r.code == 1);
        CHECK_THAT(first_line(r.out),
                   StartsWith("SQLOCK WARNING - backup: last run timed out (stopped at its "
                              "--max-runtime, SIG") &&
                       Contains("; last success "));
        auto j = check_json(cli, "backup", "1h");
        CHECK(j["status"] == "WARNING");
        CHECK(j["last_finished"]["outcome"] == "timed_out");
        // Without a success within --max-age it is CRITICAL, and says why.
        Result critical = check(cli, "backup", "1ms");
        CHECK(critical.code == 2);
        CHECK_THAT(first_line(critical.out), Contains("; last run timed out (stopped at its "));
    }
    SECTION("a later success clears it") {
        REQUIRE(cli({"run", "backup", "--", "false"}).code == 1);
        CHECK(check(cli, "backup", "1h").code == 1);
        REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
        CHECK(check(cli, "backup", "1h").code == 0);
    }
}

TEST_CASE("check: a paused job is WARNING (1), and CRITICAL stays CRITICAL", "[cli][check]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
    REQUIRE(cli({"pause", "backup", "--reason", "disk swap"}).code == 0);
    Result r = check(cli, "backup", "1h");
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(first_line(r.out),
               StartsWith("SQLOCK WARNING - backup: job 'backup' is paused by ") &&
                   Contains(": disk swap; last success "));
    auto j = check_json(cli, "backup", "1h");
    CHECK(j["status"] == "WARNING");
    CHECK(j["paused"]["reason"] == "disk swap");
    // Paused and without a success in DUR: the older fact wins.
    Result never = check(cli, "never-ran", "1h");
    REQUIRE(cli({"pause", "never-ran"}).code == 0);
    Result critical = check(cli, "never-ran", "1h");
    INFO(critical.out);
    CHECK(never.code == 2);
    CHECK(critical.code == 2);
    CHECK_THAT(first_line(critical.out), Contains("is paused by "));
    REQUIRE(cli({"resume", "backup"}).code == 0);
    CHECK(check(cli, "backup", "1h").code == 0);
    CHECK(check_json(cli, "backup", "1h")["paused"].is_null());
}

TEST_CASE("check: CRITICAL (2) without a success within DUR", "[cli][check]") {
    Cli cli = fresh_cli();
    SECTION("nothing recorded") {
        Result r = check(cli, "backup", "25h");
        INFO(r.out << r.err);
        CHECK(r.code == 2);
        CHECK(first_line(r.out) ==
              "SQLOCK CRITICAL - backup: no successful run within 25h (no run recorded)");
        auto j = check_json(cli, "backup", "25h");
        CHECK(j["status"] == "CRITICAL");
        CHECK(j["last_success"].is_null());
        CHECK(j["last_success_age_seconds"].is_null());
    }
    SECTION("only failures") {
        REQUIRE(cli({"run", "backup", "--", "false"}).code == 1);
        Result r = check(cli, "backup", "25h");
        CHECK(r.code == 2);
        CHECK_THAT(first_line(r.out), Contains("no successful run within 25h") &&
                                          Contains("last run failed (exit 1)"));
    }
    SECTION("the success grows older than --max-age") {
        REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
        CHECK(check(cli, "backup", "1h").code == 0);
        // Awaited, not slept: the database's clock passes 1 s after the end.
        CHECK(eventually([&] { return check(cli, "backup", "1s").code == 2; }, 10s));
        Result r = check(cli, "backup", "1s");
        CHECK_THAT(first_line(r.out), StartsWith("SQLOCK CRITICAL - backup: no successful run "
                                                 "within 1s; last success ") &&
                                          Contains(";;1 duration="));
        CHECK(check(cli, "backup", "1h").code == 0);  // per DUR, not stored
    }
}

TEST_CASE("check: a running job is reported and changes nothing", "[cli][check]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    SECTION("after a success: still OK") {
        REQUIRE(cli({"run", "backup", "--", "true"}).code == 0);
        Process job = cli.start(blocking_run("backup", witness, go));
        REQUIRE(wait_for_file(witness));
        Result r = check(cli, "backup", "1h");
        INFO(r.out);
        CHECK(r.code == 0);
        CHECK_THAT(first_line(r.out), StartsWith("SQLOCK OK - backup: last success ") &&
                                          Contains("; running since ") && Contains(" (pid "));
        auto j = check_json(cli, "backup", "1h");
        CHECK(j["running"]["outcome"] == "running");
        CHECK(j["last_finished"]["outcome"] == "succeeded");
        touch(go);
        CHECK(job.wait().code == 0);
    }
    SECTION("the first run, in progress: still CRITICAL, and says so") {
        Process job = cli.start(blocking_run("backup", witness, go));
        REQUIRE(wait_for_file(witness));
        Result r = check(cli, "backup", "1h");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK_THAT(first_line(r.out), Contains("no successful run within 1h; running since "));
        touch(go);
        CHECK(job.wait().code == 0);
        CHECK(check(cli, "backup", "1h").code == 0);
    }
}

TEST_CASE("check: UNKNOWN (3) for bad input, a missing history table, an unreadable database",
          "[cli][check]") {
    Cli cli = fresh_cli();
    auto unknown = [](const Result& r) {
        INFO(r.out << r.err);
        CHECK(r.code == 3);
        CHECK_THAT(r.out, StartsWith("SQLOCK UNKNOWN - "));
        CHECK(r.out.find('\n') + 1 == r.out.size());  // one line
        CHECK(r.err.empty());
    };
    SECTION("bad input") {
        unknown(cli({"check", "backup"}));  // no --max-age
        unknown(cli({"check", "--max-age", "1h"}));
        unknown(cli({"check", "backup", "--max-age", "soon"}));
        unknown(cli({"check", "backup", "--max-age", "0"}));
        unknown(cli({"check", "backup", "--max-age", "1h", "--bogus"}));
        unknown(cli({"check", "a", "b", "--max-age", "1h"}));
        unknown(cli({"check", "", "--max-age", "1h"}));
        Result r = cli({"check", "backup", "--json"});
        CHECK(r.code == 3);
        auto j = nlohmann::json::parse(r.out);
        CHECK(j["status"] == "UNKNOWN");
        CHECK(j["exit_code"] == 3);
        CHECK_THAT(j["message"].get<std::string>(), Contains("--max-age"));
    }
    SECTION("no history table") {
        sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_runs");
        Result r = check(cli, "backup", "1h");
        unknown(r);
        CHECK_THAT(r.out, Contains("no run history table") && Contains("sqlock init"));
    }
    SECTION("a database that cannot be read") {
        Result r = cli.bare(
            {"--db", "sqlite:///nonexistent-dir/locks.db", "check", "backup", "--max-age", "1h"});
        unknown(r);
        CHECK_THAT(r.out, Contains("nonexistent-dir"));
        unknown(cli.bare({"--db", "nosuch://x", "check", "backup", "--max-age", "1h"}));
    }
}

TEST_CASE("check: names are shown on one line; help documents the exit codes", "[cli][check]") {
    Cli cli = fresh_cli();
    const std::string odd = "back\"up\\x\nnext|pipe";
    REQUIRE(cli({"run", odd, "--", "true"}).code == 0);
    Result r = check(cli, odd, "1h");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(r.out.find('\n') + 1 == r.out.size());
    CHECK(r.out.find('|') == r.out.find(" | age=") + 1);  // Nagios splits at the first '|'
    auto j = check_json(cli, odd, "1h");
    CHECK(j["name"] == odd);

    Result help = cli.bare({"help", "check"});
    CHECK(help.code == 0);
    CHECK_THAT(help.out, Contains("0 OK") && Contains("1 WARNING") && Contains("2 CRITICAL") &&
                             Contains("3 UNKNOWN"));
}
