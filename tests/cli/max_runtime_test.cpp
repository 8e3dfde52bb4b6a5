// `sqlock run --max-runtime`: a job that runs too long is stopped as
// self-fencing stops it (SIGTERM to the whole job, --kill-grace, SIGKILL),
// sqlock exits 124, the run is recorded timed_out and the lock is released;
// a job that ends in time keeps its own status; bad values touch nothing.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using sqlock_test::spawn_options;
using std::chrono::milliseconds;

namespace {

using clock_type = std::chrono::steady_clock;

// What the limit settings of these tests add up to, beyond the job's own
// time: taking the lock, recording the end and releasing it, on a machine
// busy with other test suites. A bound on waiting, never a sleep.
constexpr milliseconds overhead = 15s;

// The newest run of `name`, as `sqlock history --json` shows it.
nlohmann::json last_run(const Cli& cli, const std::string& name) {
    Result r = cli({"history", name, "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const nlohmann::json runs = nlohmann::json::parse(r.out);
    REQUIRE(runs.is_array());
    REQUIRE_FALSE(runs.empty());
    return runs[0];
}

// Whether the process whose pid `pid_file` holds is still alive (a zombie
// counts as gone: it runs nothing).
bool alive(const std::string& pid_file) {
    std::istringstream in(read_file(pid_file));
    long pid = 0;
    if (!(in >> pid) || pid <= 0) return false;
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty()) return false;
    const auto close = stat.rfind(')');
    return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

// sqlock in its own process group: if the test fails half-way, its clean-up
// kills the job's processes too, which may ignore SIGTERM.
Process start_run(const Cli& cli, const args_t& args) {
    return cli.start(args, {}, spawn_options().own_group(true));
}

}  // namespace

TEST_CASE("run --max-runtime: a job that ignores SIGTERM is killed, exit 124, timed_out",
          "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string pid_file = dir + "/job.pid";
    const milliseconds max_runtime = 1s, grace = 1s;
    const auto begun = clock_type::now();
    Process p = start_run(
        cli, run_args("stubborn", {"--max-runtime", "1s", "--kill-grace", "1s"},
                      {"sh", "-c", "trap '' TERM; echo $$ > \"$1\"; sleep 60", "sh", pid_file}));
    REQUIRE(wait_for_file(pid_file));
    const std::optional<int> code = p.wait_for(max_runtime + grace + overhead);
    const auto took = clock_type::now() - begun;
    Result r = p.wait();
    INFO(r.err);
    REQUIRE(code);
    CHECK(*code == 124);
    // SIGTERM at the limit changed nothing; SIGKILL came a grace later.
    CHECK(took >= max_runtime + grace);
    CHECK_FALSE(alive(pid_file));
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, StartsWith("sqlock: 'sh' has run for its --max-runtime of 1s; stopping it "
                                 "and every process it started (SIGTERM now, SIGKILL after 1s)"));

    const nlohmann::json run = last_run(cli, "stubborn");
    CHECK(run["outcome"] == "timed_out");
    CHECK(run["signal"] == SIGKILL);
    CHECK(run["exit_status"].is_null());
    // Released: the next run gets the lock at once, without waiting.
    CHECK(cli({"show", "stubborn"}).code == 1);
    CHECK(cli(run_args("stubborn", {}, {"true"})).code == 0);
}

TEST_CASE("run --max-runtime stops the processes the job left running too", "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string job_pid = dir + "/job.pid", child_pid = dir + "/child.pid";
    Process p = start_run(
        cli, run_args("tree", {"--max-runtime", "1s", "--kill-grace", "1s"},
                      {"sh", "-c", "sleep 60 & echo $! > \"$2\"; echo $$ > \"$1\"; sleep 60", "sh",
                       job_pid, child_pid}));
    REQUIRE(wait_for_file(job_pid));
    REQUIRE(wait_for_file(child_pid));
    const std::optional<int> code = p.wait_for(1s + 1s + overhead);
    Result r = p.wait();
    INFO(r.err);
    REQUIRE(code);
    CHECK(*code == 124);
    CHECK_FALSE(alive(job_pid));
    CHECK_FALSE(alive(child_pid));
    CHECK(last_run(cli, "tree")["outcome"] == "timed_out");
    CHECK(cli({"show", "tree"}).code == 1);
}

TEST_CASE("run --max-runtime: what a job's SIGTERM trap starts runs whole, unsignalled",
          "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string report = dir + "/report";
    // Up to 200 children make each walk of the process table slow, so the
    // trap's first processes start while sqlock still sends the SIGTERM. The
    // trap starts 50 in a row and counts those that did not exit 0 (one sent
    // the SIGTERM too ends 143). On a loaded machine the SIGTERM may come
    // before all 200 are started: the trap must run whole all the same.
    const std::string trap =
        "n=0; i=0; while [ $i -lt 50 ]; do /bin/true || n=$((n+1)); "
        "i=$((i+1)); done; echo \"$n\" > \"$1\"; exit 143";
    Process p = start_run(
        cli, run_args("cleanup", {"--max-runtime", "1s", "--kill-grace", "10s"},
                      {"sh", "-c",
                       "trap '" + trap +
                           "' TERM; i=0; while [ $i -lt 200 ]; do sleep 60 & i=$((i+1)); done; "
                           "wait",
                       "sh", report}));
    const std::optional<int> code = p.wait_for(1s + overhead);
    Result r = p.wait();
    INFO(r.err);
    REQUIRE(code);
    CHECK(*code == 124);
    CHECK(read_file(report) == "0\n");
    CHECK(last_run(cli, "cleanup")["outcome"] == "timed_out");
}

TEST_CASE("run --max-runtime may be longer than the lease: the heartbeat renews it",
          "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    // A 2 s lease renewed every sixth of it; stopped at 5 s, not lost. (With
    // a 1 s lease, a renewal that a loaded server answers late fences the
    // job instead, as the lost-lock tests of run_test.cpp saw.)
    const auto begun = clock_type::now();
    Process p = start_run(
        cli, run_args("long", {"--expires", "2s", "--max-runtime", "5s"}, {"sleep", "60"}));
    const std::optional<int> code = p.wait_for(5s + overhead);
    const auto took = clock_type::now() - begun;
    Result r = p.wait();
    INFO(r.err);
    REQUIRE(code);
    CHECK(*code == 124);
    CHECK(took >= 5s);
    const nlohmann::json run = last_run(cli, "long");
    CHECK(run["outcome"] == "timed_out");
    CHECK(run["signal"] == SIGTERM);
}

TEST_CASE("run --max-runtime: a job that ends in time keeps its own status and outcome",
          "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    SECTION("succeeded") {
        Result r = cli(run_args("quick", {"--max-runtime", "1m"}, {"true"}));
        CHECK(r.code == 0);
        CHECK(r.err.empty());
        CHECK(last_run(cli, "quick")["outcome"] == "succeeded");
    }
    SECTION("failed") {
        Result r = cli(run_args("quick", {"--max-runtime", "1m"}, {"sh", "-c", "exit 3"}));
        CHECK(r.code == 3);
        CHECK(r.err.empty());
        const nlohmann::json run = last_run(cli, "quick");
        CHECK(run["outcome"] == "failed");
        CHECK(run["exit_status"] == 3);
    }
    SECTION("killed by its own signal") {
        Result r = cli(run_args("quick", {"--max-runtime", "1m"}, {"sh", "-c", "kill -KILL $$"}));
        CHECK(r.code == 128 + SIGKILL);
        CHECK(last_run(cli, "quick")["outcome"] == "killed");
    }
    CHECK(cli({"show", "quick"}).code == 1);
}

TEST_CASE("run --max-runtime: zero, negative or garbage exits 64 and writes nothing",
          "[cli][max-runtime]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    const std::string witness = make_dir() + "/ran";
    for (const std::string& value : {"0", "0s", "-1s", "abc", "1h30", "400d"}) {
        for (const args_t& option :
             {args_t{"--max-runtime", value}, args_t{"--max-runtime=" + value}}) {
            CAPTURE(option);
            Result r = cli(run_args("job", option, {"touch", witness}));
            CHECK(r.code == 64);
            check_one_line_error(r);
        }
    }
    Result missing = cli({"run", "job", "--max-runtime", "--", "touch", witness});
    CHECK(missing.code == 64);
    check_one_line_error(missing);
    CHECK_FALSE(exists(witness));
    CHECK(database_state(cli.db) == before);
}
