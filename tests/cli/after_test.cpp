// `sqlock run B --after A`: B runs only when A's newest run succeeded
// recently enough, decided from the history by the database's clock, on
// every backend. A and B run as two hosts (UTS namespaces with their own
// host names) where the machine allows it.
#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// Every run of `name`, newest first, from `history --json`.
nlohmann::json runs_of(const Cli& cli, const std::string& name) {
    Result r = cli({"history", name, "--json", "--limit", "1000"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

// The one `skipped` event of a JSON log.
nlohmann::json skipped_event(const Result& r) {
    nlohmann::json found;
    std::istringstream lines(r.err);
    for (std::string line; std::getline(lines, line);) {
        auto event = nlohmann::json::parse(line);
        if (event.at("event") == "skipped") {
            CHECK(found.is_null());
            found = event;
        }
    }
    INFO(r.err);
    REQUIRE(found.is_object());
    return found;
}

// A command that records its run in `file`.
args_t witness(const std::string& file) {
    return {"sh", "-c", "echo ran >> \"$1\"", "sh", file};
}

// B after A, within an hour, its run witnessed in `file`, logged in JSON.
args_t report_after(const std::string& file, const args_t& extra = {}) {
    args_t options = {"--after", "import", "--after-within", "1h", "--log-format", "json"};
    options.insert(options.end(), extra.begin(), extra.end());
    return run_args("report", options, witness(file));
}

// A UTC time as a literal of the backend's time column (PostgreSQL's
// timestamptz reads a bare literal in the session's zone).
std::string utc_literal(const Cli& cli, const std::string& utc) {
    return cli.db.url.rfind("postgres", 0) == 0 ? "'" + utc + "+00'" : "'" + utc + "'";
}

// A finished run of `name` planted directly, started and ended at `utc`.
void plant_run(const Cli& cli, const std::string& name, const std::string& utc,
               const std::string& outcome, long fencing_id) {
    const std::string at = utc_literal(cli, utc);
    sqlock_test::exec_sql(cli.db, "INSERT INTO " + cli.db.table +
                                      "_runs (name, host, pid, username, program, fencing_id,"
                                      " started, ended, outcome, exit_status) VALUES ('" +
                                      name + "', 'planted', 1, 'u', 'p', " +
                                      std::to_string(fencing_id) + ", " + at + ", " + at + ", '" +
                                      outcome + "', 0)");
}

// "YYYY-MM-DD HH:MM:SS.mmm" moved by `seconds` (whole seconds, small).
std::string shifted(const std::string& utc, int seconds) {
    std::tm tm{};
    strptime(utc.substr(0, 19).c_str(), "%Y-%m-%d %H:%M:%S", &tm);
    const time_t t = timegm(&tm) + seconds;
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return std::string(buf) + utc.substr(19);
}

}  // namespace

TEST_CASE("run --after: B on one host follows A on another, only after A succeeded",
          "[cli][after]") {
    Cli cli = fresh_cli();
    const bool hosts = can_name_hosts();
    const Cli host_a = hosts ? on_host(cli, "host-a") : cli;
    const Cli host_b = hosts ? on_host(cli, "host-b") : cli;
    const std::string ran = make_dir() + "/ran";

    // No run of A yet: B is skipped, pending, exit 0, and says why.
    Result none = host_b(report_after(ran));
    INFO(none.err);
    CHECK(none.code == 0);
    CHECK_FALSE(exists(ran));
    nlohmann::json event = skipped_event(none);
    CHECK(event["reason"] == "after");
    CHECK(event["outcome"] == "after_pending");
    CHECK(event["exit_code"] == 0);
    CHECK(event["predecessors"][0]["name"] == "import");
    CHECK(event["predecessors"][0]["state"] == "missing");
    CHECK(event["predecessors"][0]["run"].is_null());

    // A fails on host-a: B is skipped as blocked, and check says WARNING.
    REQUIRE(host_a(run_args("import", {}, {"sh", "-c", "exit 3"})).code == 3);
    Result blocked = host_b(report_after(ran));
    CHECK(blocked.code == 0);
    CHECK_FALSE(exists(ran));
    event = skipped_event(blocked);
    CHECK(event["outcome"] == "after_failed");
    CHECK(event["predecessors"][0]["state"] == "failed");
    CHECK(event["predecessors"][0]["run"]["outcome"] == "failed");
    CHECK(event["predecessors"][0]["run"]["exit_status"] == 3);
    Result text =
        host_b(run_args("report", {"--after", "import", "--after-within", "1h"}, witness(ran)));
    CHECK(text.code == 0);
    CHECK_THAT(text.err, Contains("'report' runs after 'import': 'import' did not succeed last") &&
                             Contains("failed (exit 3)"));
    CHECK(cli(run_args("report", {"--after", "import", "--after-within", "1h", "--quiet"},
                       witness(ran)))
              .err.empty());
    auto skips = runs_of(cli, "report");
    REQUIRE(skips.size() == 4);
    CHECK(skips[0]["outcome"] == "after_failed");
    CHECK(skips[3]["outcome"] == "after_pending");
    if (hosts) CHECK(skips[1]["host"] == "host-b");  // [0]: the --quiet run, on this host
    // Only ever skips: no success, so CRITICAL, and the block is named.
    Result critical = cli({"check", "report", "--max-age", "1h"});
    CHECK(critical.code == 2);
    CHECK_THAT(critical.out, Contains("blocked"));

    // A succeeds on host-a: B runs on host-b, is OK, and a success of B
    // followed by a blocked skip is WARNING.
    REQUIRE(host_a(run_args("import", {}, {"true"})).code == 0);
    Result runs = host_b(report_after(ran));
    INFO(runs.err);
    CHECK(runs.code == 0);
    CHECK(count_lines(ran) == 1);
    CHECK(cli({"check", "report", "--max-age", "1h"}).code == 0);
    auto imports = runs_of(cli, "import");
    auto reports = runs_of(cli, "report");
    CHECK(reports[0]["outcome"] == "succeeded");
    if (hosts) {
        CHECK(imports[0]["host"] == "host-a");
        CHECK(reports[0]["host"] == "host-b");
    }
    REQUIRE(host_a(run_args("import", {}, {"false"})).code == 1);
    CHECK(host_b(report_after(ran)).code == 0);
    CHECK(count_lines(ran) == 1);
    Result warning = cli({"check", "report", "--max-age", "1h", "--json"});
    CHECK(warning.code == 1);
    CHECK(nlohmann::json::parse(warning.out)["skipped"]["outcome"] == "after_failed");

    // Several predecessors: every one must have succeeded.
    REQUIRE(host_a(run_args("import", {}, {"true"})).code == 0);
    REQUIRE(host_a(run_args("fetch", {}, {"true"})).code == 0);
    CHECK(host_b(
              run_args("report", {"--after", "import,fetch", "--after-within", "1h"}, witness(ran)))
              .code == 0);
    CHECK(count_lines(ran) == 2);
    REQUIRE(host_a(run_args("fetch", {}, {"false"})).code == 1);
    CHECK(
        host_b(run_args("report", {"--after", "import", "--after", "fetch", "--after-within", "1h"},
                        witness(ran)))
            .code == 0);
    CHECK(count_lines(ran) == 2);
}

TEST_CASE("run --after: a lost or timed-out predecessor blocks; an old success is missing",
          "[cli][after]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    // Lost: its lease ran out unrenewed while it ran.
    Result lost = cli(run_args("import", {"--no-heartbeat", "--expires", "1s"}, {"sleep", "1.5"}));
    REQUIRE(lost.code == 79);
    nlohmann::json event = skipped_event(cli(report_after(ran)));
    CHECK(event["outcome"] == "after_failed");
    CHECK(event["predecessors"][0]["run"]["outcome"] == "lost");
    // Timed out: stopped at its --max-runtime.
    REQUIRE(cli(run_args("import", {"--max-runtime", "200ms"}, {"sleep", "30"})).code == 124);
    event = skipped_event(cli(report_after(ran)));
    CHECK(event["outcome"] == "after_failed");
    CHECK(event["predecessors"][0]["run"]["outcome"] == "timed_out");
    // A success older than --after-within: missing, not failed.
    plant_run(cli, "import", "2030-01-01 00:00:00.000", "succeeded", 900001);
    plant_run(cli, "old", "2020-01-01 00:00:00.000", "succeeded", 900002);
    event = skipped_event(
        cli(run_args("report", {"--after", "old", "--after-within", "1d", "--log-format", "json"},
                     witness(ran))));
    CHECK(event["outcome"] == "after_pending");
    CHECK(event["predecessors"][0]["state"] == "missing");
    CHECK(event["predecessors"][0]["run"]["outcome"] == "succeeded");
    CHECK_FALSE(exists(ran));
}

TEST_CASE("run --after --wait: a running predecessor is waited for, within the wait",
          "[cli][after]") {
    Cli cli = fresh_cli();
    const bool hosts = can_name_hosts();
    const Cli host_a = hosts ? on_host(cli, "host-a") : cli;
    const Cli host_b = hosts ? on_host(cli, "host-b") : cli;
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    Process import =
        host_a.start(run_args("import", {}, blocking_command(dir + "/a", dir + "/go")));
    REQUIRE(wait_for_file(dir + "/a"));

    // Without --wait, and when the wait runs out: pending, not run.
    nlohmann::json event = skipped_event(host_b(report_after(ran)));
    CHECK(event["outcome"] == "after_pending");
    CHECK(event["predecessors"][0]["state"] == "running");
    event = skipped_event(host_b(report_after(ran, {"--wait", "300ms"})));
    CHECK(event["predecessors"][0]["state"] == "running");

    // With a long wait: B takes its lock, waits for A (its lock held), and
    // runs once A has succeeded.
    Process report = host_b.start(report_after(ran, {"--wait", "60s"}));
    REQUIRE(eventually([&] { return !show_json(cli, "report").is_null(); }, 30s));
    CHECK_FALSE(exists(ran));
    touch(dir + "/go");
    CHECK(import.wait().code == 0);
    Result r = report.wait(60s);
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(count_lines(ran) == 1);
    CHECK_THAT(r.err, Contains("\"event\":\"waiting_for_after\""));
    CHECK(runs_of(cli, "report")[0]["outcome"] == "succeeded");
}

TEST_CASE("run --once-per --after: once a window, after the predecessor's success in it",
          "[cli][after][once-per]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir() + "/ran";
    const args_t daily = {"--once-per", "300d", "--after", "import", "--log-format", "json"};
    // A success from before the window does not count.
    plant_run(cli, "import", "2020-01-01 00:00:00.000", "succeeded", 900001);
    nlohmann::json event = skipped_event(cli(run_args("report", daily, witness(ran))));
    CHECK(event["outcome"] == "after_pending");
    CHECK(event["predecessors"][0]["state"] == "missing");
    REQUIRE(event["window_start"].is_string());
    CHECK(event["after_since"] == event["window_start"]);
    // A skip does not do the window, even with --once-per-any-outcome.
    args_t any = daily;
    any.push_back("--once-per-any-outcome");
    CHECK(skipped_event(cli(run_args("report", any, witness(ran))))["reason"] == "after");

    REQUIRE(cli(run_args("import", {}, {"true"})).code == 0);
    CHECK(cli(run_args("report", daily, witness(ran))).code == 0);
    CHECK(count_lines(ran) == 1);
    // The window is done: no second run, whatever the predecessor does.
    REQUIRE(cli(run_args("import", {}, {"false"})).code == 1);
    event = skipped_event(cli(run_args("report", daily, witness(ran))));
    CHECK(event["reason"] == "window_done");
    CHECK(count_lines(ran) == 1);
}

TEST_CASE("run --once-per --tz --after: the window is the local day, by the database's clock",
          "[cli][after][tz]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    const args_t local = {"--once-per", "1d",     "--tz",         "Asia/Kolkata",
                          "--after",    "import", "--log-format", "json"};
    // Where this local day started, by the database's clock.
    REQUIRE(cli(run_args("probe", {"--once-per", "1d", "--tz", "Asia/Kolkata"},
                         {"sh", "-c", "printf %s \"$SQLOCK_WINDOW_START\" > \"$1\"", "sh",
                          dir + "/start"}))
                .code == 0);
    const std::string start = read_file(dir + "/start");
    REQUIRE(start.size() == 23);
    CHECK(start.substr(11) == "18:30:00.000");  // Kolkata's midnight, UTC+5:30
    // A success a minute before local midnight is yesterday's.
    plant_run(cli, "import", shifted(start, -60), "succeeded", 900001);
    nlohmann::json event = skipped_event(cli(run_args("report", local, witness(ran))));
    CHECK(event["predecessors"][0]["state"] == "missing");
    CHECK(event["after_since"] == start);
    // One a second after it is today's.
    plant_run(cli, "import", shifted(start, 1), "succeeded", 900002);
    Result r = cli(run_args("report", local, witness(ran)));
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(count_lines(ran) == 1);
}

TEST_CASE("run --after: bad input is a one-line usage error (64), nothing written",
          "[cli][after]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    const std::string ran = make_dir() + "/ran";
    const std::vector<std::pair<args_t, std::string>> bad = {
        {{"--after", "", "--after-within", "1h"}, "--after needs job names"},
        {{"--after", std::string(129, 'x'), "--after-within", "1h"}, "at most 128 bytes"},
        {{"--after", "bad\xff", "--after-within", "1h"}, "not valid UTF-8"},
        {{"--after", "import", "--after-within", "0"}, "--after-within"},
        {{"--after", "report", "--after-within", "1h"}, "names the job itself"},
        {{"--after", "import"}, "--after needs --after-within DUR"},
        {{"--after", "a,a", "--after-within", "1h"}, "is given twice"},
        {{"--after-within", "1h"}, "--after-within needs --after"},
        {{"--after", "import", "--after-within", "1h", "--no-history"}, "drop --no-history"},
    };
    for (const auto& [options, message] : bad) {
        CAPTURE(message);
        Result r = cli(run_args("report", options, witness(ran)));
        CHECK(r.code == 64);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains(message));
    }
    Result set =
        cli({"run", "report", "other", "--after", "import", "--after-within", "1h", "--", "true"});
    CHECK(set.code == 64);
    check_one_line_error(set);
    CHECK_FALSE(exists(ran));
    CHECK(database_state(cli.db) == before);
}
