// The run history and `run --once-per`, on every backend: three
// "hosts" (processes) racing for short windows, retries after failures, a
// killed holder's run turning lost, pruning beside lock traffic, bad input.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <list>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// The runs `sqlock history --json` shows (all of them, newest first).
nlohmann::json history(const Cli& cli, const args_t& extra = {}) {
    args_t args = {"history", "--json", "--limit", "100000"};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = cli(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

// A command that appends $SQLOCK_WINDOW_START (or "-") to `file`, after
// `pause` seconds ("0" for none), and exits with `code`.
args_t window_writer(const std::string& file, const std::string& pause, int code = 0) {
    return {"sh", "-c",
            "sleep " + pause + "; echo \"${SQLOCK_WINDOW_START:--}\" >> '" + file + "'; exit " +
                std::to_string(code)};
}

std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> lines;
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) lines.push_back(line);
    return lines;
}

// `n` finished runs of "old" from 2020, planted directly, with fencing ids
// from `first_id`. The literal reads as a time in every dialect
// (PostgreSQL's in the session's time zone: hours do not matter against the
// tests' retentions of days).
void plant_old_runs(const Cli& cli, int n, long first_id) {
    const std::string old = "'2020-01-01 00:00:00.000'";
    std::string sql = "INSERT INTO " + cli.db.table +
                      "_runs (name, host, pid, username, program, fencing_id, started, ended, "
                      "outcome, exit_status) VALUES ";
    for (int i = 0; i < n; ++i)
        sql += std::string(i ? ", " : "") + "('old', 'h', 1, 'u', 'p', " +
               std::to_string(first_id + i) + ", " + old + ", " + old + ", 'succeeded', 0)";
    sqlock_test::exec_sql(cli.db, sql);
}

// A window of a year: one window for the whole test (unless it runs across
// its boundary, once in 300 days).
const std::string long_window = "300d";

}  // namespace

TEST_CASE("once per window: three hosts at staggered times run CMD exactly once per window",
          "[cli][history][once-per]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    // Three hosts fire in turn every 250 ms or more, 48 times: six 2 s
    // windows or more, some runs while another host runs the job (they wait
    // for the lock, then find the window done), most after it finished. A
    // count, not a duration: a slow machine (sanitizers, load) fires as often.
    constexpr int fired = 48;
    std::list<Process> running;  // erased from the middle: Process is not assignable
    std::vector<Result> results;
    for (int k = 0; k < fired; ++k) {
        running.push_back(cli.start(
            with_command({"run", "nightly", "--once-per", "2s", "--wait", "20s", "--label",
                          "host-" + std::to_string(k % 3), "--log-format", "json"},
                         window_writer(ran, "0.3"))));
        std::this_thread::sleep_for(250ms);  // the cron schedule, not a synchronisation
        for (auto it = running.begin(); it != running.end();) {
            if (it->poll()) {
                results.push_back(it->wait());
                it = running.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& p : running) results.push_back(p.wait(30s));
    CHECK(results.size() == static_cast<std::size_t>(fired));
    // The window each host decided on, from its own events: it ran the
    // command for it (started) or found it done (skipped).
    std::map<std::string, int> decided;
    for (const auto& r : results) {
        INFO(r.err);
        CHECK(r.code == 0);
        std::istringstream lines(r.err);
        int decisions = 0;
        for (std::string line; std::getline(lines, line);) {
            const auto event = nlohmann::json::parse(line);
            if (event.at("event") == "started" ||
                (event.at("event") == "skipped" && event.at("reason") == "window_done")) {
                ++decided[event.at("window_start").get<std::string>()];
                ++decisions;
            }
        }
        CHECK(decisions == 1);
    }

    // From the command's own file: each window once, and every window a
    // host decided on was run (by it or by the host that found it first).
    // Whether the machine fired in every window is its own business.
    std::vector<std::string> windows = lines_of(ran);
    std::map<std::string, int> per_window;
    for (const auto& w : windows) ++per_window[w];
    for (const auto& [w, n] : per_window) {
        INFO("window " << w);
        CHECK(n == 1);
    }
    std::vector<std::string> ran_windows, decided_windows;
    for (const auto& [w, n] : per_window) ran_windows.push_back(w);
    for (const auto& [w, n] : decided) decided_windows.push_back(w);
    CHECK(ran_windows == decided_windows);
    REQUIRE(per_window.size() >= 3);
    for (std::size_t i = 1; i < ran_windows.size(); ++i) {
        const double apart = sqlock_test::seconds_between(ran_windows[i - 1], ran_windows[i]);
        CHECK(apart >= 2.0 - 1e-6);
        CHECK(std::fmod(apart + 1e-6, 2.0) < 1e-3);  // on the 2 s grid
    }

    // From the history: one succeeded run per window, the same windows, and
    // every recorded run of the name is one that ran.
    auto runs = history(cli, {"nightly"});
    std::map<std::string, int> succeeded;
    for (const auto& run : runs) {
        REQUIRE(run["window_start"].is_string());
        CHECK(run["outcome"] == "succeeded");
        CHECK(run["exit_status"] == 0);
        ++succeeded[run["window_start"].get<std::string>()];
    }
    CHECK(succeeded == per_window);
}

TEST_CASE("once per window: a failed run is retried in the same window; success closes it",
          "[cli][history][once-per]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    const args_t run = {"run", "backup", "--once-per", long_window, "-v"};

    Result failed = cli(with_command(run, window_writer(ran, "0", 3)));
    CHECK(failed.code == 3);
    Result retried = cli(with_command(run, window_writer(ran, "0")));
    CHECK(retried.code == 0);
    Result skipped = cli(with_command(run, window_writer(ran, "0")));
    CHECK(skipped.code == 0);
    CHECK_THAT(skipped.err, Contains("is done: run") && Contains("succeeded"));
    CHECK(count_lines(ran) == 2);  // the failure and the retry, not the third

    auto runs = history(cli, {"backup"});
    REQUIRE(runs.size() == 2);
    CHECK(runs[0]["outcome"] == "succeeded");  // newest first
    CHECK(runs[1]["outcome"] == "failed");
    CHECK(runs[1]["exit_status"] == 3);
    CHECK(runs[0]["window_start"] == runs[1]["window_start"]);

    SECTION("--quiet: the skip says nothing") {
        Result quiet = cli(with_command({"run", "backup", "--once-per", long_window, "--quiet"},
                                        window_writer(ran, "0")));
        CHECK(quiet.code == 0);
        CHECK(quiet.err.empty());
        CHECK(count_lines(ran) == 2);
    }
    SECTION("--once-per-any-outcome: a failed run closes the window too") {
        const args_t any = {"run", "report", "--once-per", long_window, "--once-per-any-outcome"};
        CHECK(cli(with_command(any, window_writer(ran, "0", 1))).code == 1);
        CHECK(cli(with_command(any, window_writer(ran, "0"))).code == 0);
        CHECK(count_lines(ran) == 3);
    }
    SECTION("a killed command does not close the window") {
        CHECK(cli(with_command({"run", "killed", "--once-per", long_window},
                               {"sh", "-c", "kill -KILL $$"}))
                  .code == 128 + SIGKILL);
        auto k = history(cli, {"killed"});
        REQUIRE(k.size() == 1);
        CHECK(k[0]["outcome"] == "killed");
        CHECK(k[0]["signal"] == SIGKILL);
        CHECK(
            cli(with_command({"run", "killed", "--once-per", long_window}, window_writer(ran, "0")))
                .code == 0);
        CHECK(count_lines(ran) == 3);
    }
}

TEST_CASE("reap keeps the run that did a --once-per window while the window may last",
          "[cli][history][once-per][prune]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    const args_t run = {"run", "quarterly", "--once-per", long_window};
    REQUIRE(cli(with_command(run, window_writer(ran, "0"))).code == 0);
    REQUIRE(cli({"run", "plain", "--", "true"}).code == 0);
    // A window longer than the history's retention: once the plain run is
    // old enough to be pruned, so is the window's by age alone.
    REQUIRE(sqlock_test::eventually([&] {
        REQUIRE(cli({"reap", "--history-retention", "1s"}).code == 0);
        return cli({"history", "plain", "--json"}).out.find("\"id\"") == std::string::npos;
    }));
    CHECK(cli({"history", "quarterly", "--json"}).out.find("\"id\"") != std::string::npos);
    Result again = cli(with_command(run, window_writer(ran, "0")));
    CHECK(again.code == 0);
    CHECK(count_lines(ran) == 1);  // not run again in its window
}

TEST_CASE("a killed holder's run shows as lost after its lease, and its window stays open",
          "[cli][history][lost]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string witness = dir + "/witness";
    Process holder =
        cli.start(with_command({"run", "job", "--expires", "2s", "--once-per", long_window},
                               blocking_command(witness, dir + "/never")));
    REQUIRE(wait_for_file(witness));
    auto runs = history(cli, {"job"});
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["outcome"] == "running");
    CHECK(runs[0]["ended"].is_null());

    holder.signal(SIGKILL);
    holder.wait();
    // Lost once the lease has run out (read from the expired row) ...
    CHECK(eventually([&] { return history(cli, {"job"})[0]["outcome"] == "lost"; }, 15s));
    runs = history(cli, {"job"});
    REQUIRE(runs[0]["ended"].is_string());
    CHECK(runs[0]["duration_seconds"].get<double>() >= 1.5);
    const std::string ended = runs[0]["ended"];

    // ... and still after the reaper deleted the row: it recorded the end.
    Result reaped = cli({"reap"});
    CHECK(reaped.code == 0);
    CHECK_THAT(reaped.err, Contains("deleted 1 expired lock"));
    runs = history(cli, {"job"});
    CHECK(runs[0]["outcome"] == "lost");
    CHECK(runs[0]["ended"] == ended);

    // A lost run does not close the window.
    const std::string ran = dir + "/ran";
    CHECK(cli(with_command({"run", "job", "--once-per", long_window}, window_writer(ran, "0")))
              .code == 0);
    CHECK(count_lines(ran) == 1);
}

TEST_CASE("history: filters, text and JSON; --no-history records nothing", "[cli][history]") {
    Cli cli = fresh_cli();
    CHECK(cli({"run", "a", "--", "true"}).code == 0);
    CHECK(cli({"run", "b", "--", "false"}).code == 1);
    CHECK(cli({"run", "a", "--no-history", "--", "true"}).code == 0);

    auto all = history(cli);
    REQUIRE(all.size() == 2);
    CHECK(all[0]["name"] == "b");
    CHECK(all[0]["outcome"] == "failed");
    CHECK(all[0]["window_start"].is_null());
    CHECK(all[1]["name"] == "a");
    CHECK(all[1]["program"] == "true");
    CHECK(all[1]["fencing_id"].get<std::int64_t>() > 0);
    CHECK(all[1]["pid"].get<std::int64_t>() > 0);
    CHECK(history(cli, {"a"}).size() == 1);
    CHECK(history(cli, {"--limit", "1"}).size() == 1);
    CHECK(history(cli, {"--since", "1h"}).size() == 2);
    CHECK(history(cli, {"nothing"}).empty());

    Result text = cli({"history"});
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Contains("OUTCOME") && Contains("succeeded") && Contains("exit 1"));
    Result none = cli({"history", "nothing"});
    CHECK(none.code == 0);
    CHECK_THAT(none.err, Contains("no runs recorded of 'nothing'"));
}

TEST_CASE("reap prunes old history in batches while locks keep working", "[cli][history][prune]") {
    Cli cli = fresh_cli();
    CHECK(cli({"run", "recent", "--", "true"}).code == 0);
    plant_old_runs(cli, 1200, 1000000);  // three of reap's batches
    REQUIRE(history(cli, {"old"}).size() == 1200);

    Process reaper = cli.start({"reap", "--history-retention", "30d"});
    // Lock traffic meanwhile: every run gets its lock at once (no --wait).
    int runs = 0;
    while (!reaper.poll() || runs < 5) {
        Result r = cli({"run", "traffic", "--", "true"});
        INFO(r.err);
        CHECK(r.code == 0);
        ++runs;
        if (runs > 200) break;
    }
    Result reaped = reaper.wait();
    CHECK(reaped.code == 0);
    CHECK_THAT(reaped.err, Contains("1200 runs of the history older than 30d"));
    CHECK(history(cli, {"old"}).empty());
    CHECK(history(cli, {"recent"}).size() == 1);
    CHECK(history(cli, {"traffic"}).size() == static_cast<std::size_t>(runs));
    // Nothing left to prune: the line says only what was deleted.
    Result again = cli({"reap", "--history-retention", "1h"});
    CHECK_THAT(again.err, Catch::Matchers::StartsWith("sqlock: deleted 0 expired locks ["));
}

TEST_CASE("reap --dry-run counts the runs it would prune and deletes none",
          "[cli][history][prune][reap]") {
    Cli cli = fresh_cli();
    CHECK(cli({"run", "recent", "--", "true"}).code == 0);
    plant_old_runs(cli, 5, 2000000);

    Result dry = cli({"reap", "--dry-run", "--history-retention", "30d"});
    INFO(dry.err);
    CHECK(dry.code == 0);
    CHECK_THAT(dry.err, Catch::Matchers::StartsWith(
                            "sqlock: would delete 0 expired locks and 5 runs of the history older "
                            "than 30d ["));
    Result json = cli({"reap", "--dry-run", "--json", "--history-retention", "30d"});
    REQUIRE(json.code == 0);
    auto j = nlohmann::json::parse(json.out);
    CHECK(j["dry_run"] == true);
    CHECK(j["history_would_prune"] == 5);
    CHECK(j["history_pruned"] == 0);  // "deleted": nothing
    CHECK(j["pauses_would_delete"] == 0);
    CHECK(j["pauses_deleted"] == 0);
    // Nothing was deleted.
    CHECK(history(cli, {"old"}).size() == 5);
    CHECK(history(cli, {"recent"}).size() == 1);

    Result real = cli({"reap", "--json", "--history-retention", "30d"});
    REQUIRE(real.code == 0);
    auto r = nlohmann::json::parse(real.out);
    CHECK(r["dry_run"] == false);
    CHECK(r["history_pruned"] == 5);
    CHECK_FALSE(r.contains("history_would_prune"));  // only a dry run says "would"
    CHECK(history(cli, {"old"}).empty());
    CHECK(history(cli, {"recent"}).size() == 1);
}

TEST_CASE("once-per and history: bad input is a one-line usage error (64), nothing runs",
          "[cli][history][usage]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    const std::vector<args_t> bad_runs = {
        {"--once-per", "0"},
        {"--once-per", "-1h"},
        {"--once-per", "soon"},
        {"--once-per", "400d"},
        {"--once-per", "1h", "--once-per-offset", "1h"},
        {"--once-per", "1h", "--once-per-offset", "2h"},
        {"--once-per", "1h", "--once-per-offset", "-5m"},
        {"--once-per", "1h", "--no-history"},
        {"--once-per", "1h", "--slots", "2"},
        {"--once-per-offset", "3h"},
        {"--once-per-any-outcome"},
    };
    for (const auto& extra : bad_runs) {
        args_t args = {"run", "job"};
        args.insert(args.end(), extra.begin(), extra.end());
        Result r = cli(with_command(args, window_writer(ran, "0")));
        INFO(r.err);
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
    }
    const std::vector<args_t> bad_other = {
        {"history", "--since", "yesterday"},  {"history", "--since", "0"},
        {"history", "--limit", "0"},          {"history", "a", "b"},
        {"reap", "--history-retention", "0"}, {"reap", "--history-retention", "x"},
    };
    for (const auto& args : bad_other) {
        Result r = cli(args);
        INFO(r.err);
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
    }
    CHECK_FALSE(exists(ran));
    CHECK(history(cli).empty());
}

TEST_CASE("a lock table without its history table: run says so, --once-per refuses (78)",
          "[cli][history][upgrade]") {
    Cli cli = fresh_cli();
    // A table made before sqlock had a history: the history table is missing.
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_runs");
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran";
    Result plain = cli(with_command({"run", "job"}, window_writer(ran, "0")));
    CHECK(plain.code == 0);
    CHECK(plain.err_lines() == 1);
    CHECK_THAT(plain.err, Contains("not recording this run") && Contains("sqlock init"));
    CHECK(count_lines(ran) == 1);

    Result once = cli(with_command({"run", "job", "--once-per", "1d"}, window_writer(ran, "0")));
    CHECK(once.code == 78);
    CHECK(once.err_lines() == 1);
    CHECK(count_lines(ran) == 1);  // not run
    CHECK(cli({"history"}).code == 78);
    CHECK(cli({"reap"}).code == 0);  // nothing to prune, locks still reaped
    Result dry = cli({"reap", "--dry-run", "--json"});
    CHECK(dry.code == 0);
    CHECK(nlohmann::json::parse(dry.out)["history_would_prune"] == 0);

    // `init` adds it; then everything works.
    CHECK(cli({"init"}).code == 0);
    CHECK(cli(with_command({"run", "job", "--once-per", "1d"}, window_writer(ran, "0"))).code == 0);
    CHECK(history(cli).size() == 1);
}

TEST_CASE("a run whose lease ran out unrenewed is recorded lost, and says so (79)",
          "[cli][history][lost]") {
    Cli cli = fresh_cli();
    // No heartbeat, a job longer than its lease, nobody taking the lock
    // over: the release still finds the row, but the run must not count.
    Result r = cli({"run", "slow", "--expires", "1s", "--no-heartbeat", "--once-per", "300d", "--",
                    "sleep", "1.5"});
    INFO(r.err);
    CHECK(r.code == 79);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Contains("recorded run 1 as lost, not succeeded"));
    auto runs = history(cli, {"slow"});
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["outcome"] == "lost");
    CHECK(runs[0]["exit_status"] == 0);
    // The window stays open.
    CHECK(cli({"run", "slow", "--once-per", "300d", "-v", "--", "true"}).code == 0);
    CHECK(history(cli, {"slow"}).size() == 2);
}
