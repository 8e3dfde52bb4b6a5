// `sqlock metrics`: the Prometheus text format, read back with
// the reference parser (Python's prometheus_client, through
// parse_metrics.py), with values matching what the test did.
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;

namespace {

// Debian's python3 (python3-prometheus-client is installed for it), else
// whichever python3 is on PATH.
std::string python() {
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

struct Sample {
    std::string name;
    std::map<std::string, std::string> labels;
    double value = 0;
};

// The samples of `text` as prometheus_client parses them; nullopt (with the
// reason given to have_tool) when python3 or the module is missing.
std::optional<std::vector<Sample>> parse(const std::string& text) {
    const std::string dir = make_dir();
    { std::ofstream(dir + "/in.prom") << text; }
    const std::string command = python() + " '" + SQLOCK_CLI_TEST_DIR + "/parse_metrics.py' < '" +
                                dir + "/in.prom' > '" + dir + "/out' 2>&1";
    const int status = std::system(command.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const std::string out = read_file(dir + "/out");
    if (code == 127 || code == 77) {
        if (!sqlock_test::have_tool(false, "python3 with prometheus_client (" + out + ")"))
            return std::nullopt;
    }
    INFO(out << "\n--- input:\n" << text);
    REQUIRE(code == 0);
    std::vector<Sample> samples;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        auto j = nlohmann::json::parse(line);
        Sample s;
        s.name = j["name"];
        for (auto& [k, v] : j["labels"].items()) s.labels[k] = v.get<std::string>();
        s.value = j["value"];
        samples.push_back(s);
    }
    return samples;
}

// The value of the one sample `name` with all of `labels`; fails if none.
double value_of(const std::vector<Sample>& samples, const std::string& name,
                const std::map<std::string, std::string>& labels) {
    for (const auto& s : samples) {
        if (s.name != name) continue;
        bool all = true;
        for (const auto& [k, v] : labels) {
            auto it = s.labels.find(k);
            if (it == s.labels.end() || it->second != v) all = false;
        }
        if (all) return s.value;
    }
    FAIL("no sample " << name);
    return -1;
}

}  // namespace

TEST_CASE("metrics: parses as Prometheus text; counts match the runs and locks", "[cli][metrics]") {
    Cli cli = fresh_cli();
    const std::string odd = "odd \"quoted\" back\\slash\nnew line";
    REQUIRE(cli(run_args("backup", {}, {"true"})).code == 0);
    REQUIRE(cli(run_args("backup", {}, {"true"})).code == 0);
    REQUIRE(cli(run_args("backup", {}, {"sh", "-c", "exit 3"})).code == 3);
    REQUIRE(cli(run_args("backup", {}, {"sh", "-c", "kill -KILL $$"})).code == 128 + SIGKILL);
    REQUIRE(cli(run_args(odd, {}, {"true"})).code == 0);
    REQUIRE(cli({"acquire", "held-1"}).code == 0);
    REQUIRE(cli({"acquire", "held-2"}).code == 0);
    // A row expired but not yet reaped.
    REQUIRE(cli({"acquire", "short", "--expires", "1s"}).code == 0);
    REQUIRE(sqlock_test::eventually([&] {
        return nlohmann::json::parse(cli({"show", "short", "--json"}).out)["expired"] == true;
    }));
    // A job in progress.
    const std::string dir = make_dir();
    args_t blocking = {"run", "sync", "--"};
    for (const auto& w : blocking_command(dir + "/witness", dir + "/go")) blocking.push_back(w);
    Process job = cli.start(blocking);
    REQUIRE(wait_for_file(dir + "/witness"));

    Result r = cli({"metrics"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out,
               Contains("# TYPE sqlock_job_runs gauge") && Contains("# HELP sqlock_locks_held "));
    // The odd name, escaped as the format says: \" \\ \n.
    CHECK_THAT(r.out, Contains("name=\"odd \\\"quoted\\\" back\\\\slash\\nnew line\""));

    auto parsed = parse(r.out);
    if (!parsed) return;
    const auto& s = *parsed;
    const std::string table = cli.db.table;
    auto runs = [&](const std::string& name, const std::string& outcome) {
        return value_of(s, "sqlock_job_runs",
                        {{"table", table}, {"name", name}, {"outcome", outcome}});
    };
    CHECK(runs("backup", "succeeded") == 2);
    CHECK(runs("backup", "failed") == 1);
    CHECK(runs("backup", "killed") == 1);
    CHECK(runs("backup", "lost") == 0);
    CHECK(runs("backup", "timed_out") == 0);
    CHECK(runs("backup", "running") == 0);
    CHECK(runs(odd, "succeeded") == 1);  // the parser gives back the exact name
    CHECK(runs("sync", "running") == 1);
    CHECK(value_of(s, "sqlock_job_running", {{"name", "sync"}}) == 1);
    CHECK(value_of(s, "sqlock_job_last_outcome", {{"name", "backup"}, {"outcome", "killed"}}) == 1);
    CHECK(value_of(s, "sqlock_job_last_outcome", {{"name", "backup"}, {"outcome", "succeeded"}}) ==
          0);
    CHECK(value_of(s, "sqlock_job_last_outcome", {{"name", odd}, {"outcome", "succeeded"}}) == 1);
    const double last =
        value_of(s, "sqlock_job_last_success_timestamp_seconds", {{"name", "backup"}});
    CHECK(last > 1.7e9);
    CHECK(std::abs(last - static_cast<double>(std::time(nullptr))) < 600);
    CHECK(value_of(s, "sqlock_job_last_run_duration_seconds", {{"name", "backup"}}) >= 0);
    // held-1, held-2 and the running job's lock; "short" expired.
    CHECK(value_of(s, "sqlock_locks_held", {{"table", table}}) == 3);
    CHECK(value_of(s, "sqlock_locks_expired", {{"table", table}}) == 1);

    touch(dir + "/go");
    CHECK(job.wait().code == 0);
    REQUIRE(cli({"reap"}).code == 0);
    auto after = parse(cli({"metrics"}).out);
    REQUIRE(after);
    CHECK(value_of(*after, "sqlock_locks_expired", {{"table", table}}) == 0);
    CHECK(value_of(*after, "sqlock_locks_held", {{"table", table}}) == 2);
    CHECK(value_of(*after, "sqlock_job_runs", {{"name", "sync"}, {"outcome", "succeeded"}}) == 1);
    CHECK(value_of(*after, "sqlock_job_running", {{"name", "sync"}}) == 0);
}

TEST_CASE("metrics: a run stopped at its --max-runtime counts as timed_out", "[cli][metrics]") {
    Cli cli = fresh_cli();
    REQUIRE(cli(run_args("sync", {}, {"true"})).code == 0);
    REQUIRE(cli(run_args("sync", {"--max-runtime", "200ms"}, {"sleep", "60"})).code == 124);
    Result r = cli({"metrics"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("outcome=\"timed_out\""));
    auto parsed = parse(r.out);
    if (!parsed) return;
    const auto& s = *parsed;
    auto runs = [&](const std::string& outcome) {
        return value_of(s, "sqlock_job_runs", {{"name", "sync"}, {"outcome", outcome}});
    };
    CHECK(runs("timed_out") == 1);
    CHECK(runs("succeeded") == 1);
    CHECK(runs("running") == 0);
    auto last = [&](const std::string& outcome) {
        return value_of(s, "sqlock_job_last_outcome", {{"name", "sync"}, {"outcome", outcome}});
    };
    CHECK(last("timed_out") == 1);
    CHECK(last("succeeded") == 0);
    CHECK(last("killed") == 0);
}

TEST_CASE("metrics: an empty table; bad usage; no history table", "[cli][metrics]") {
    Cli cli = fresh_cli();
    Result r = cli({"metrics"});
    REQUIRE(r.code == 0);
    auto parsed = parse(r.out);
    if (parsed) {
        CHECK(value_of(*parsed, "sqlock_locks_held", {{"table", cli.db.table}}) == 0);
        CHECK(value_of(*parsed, "sqlock_locks_expired", {{"table", cli.db.table}}) == 0);
    }
    Result extra = cli({"metrics", "x"});
    CHECK(extra.code == 64);
    CHECK(extra.out.empty());
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_runs");
    Result missing = cli({"metrics"});
    CHECK(missing.code == 78);
    CHECK(missing.out.empty());
    CHECK_THAT(missing.err, Contains("sqlock init"));
}

namespace {

// The sample `name` whose labels are exactly `labels`; nullopt if none.
std::optional<double> exact(const std::vector<Sample>& samples, const std::string& name,
                            const std::map<std::string, std::string>& labels) {
    for (const auto& s : samples)
        if (s.name == name && s.labels == labels) return s.value;
    return std::nullopt;
}

}  // namespace

TEST_CASE("metrics: lock-level series per name, bounded by --max-names, odd names escaped",
          "[cli][metrics][locks]") {
    Cli cli = fresh_cli();
    const std::string odd = "lock \"q\" \\ and\nnewline";
    const std::string dir = make_dir();
    REQUIRE(cli({"acquire", odd, "--expires", "1h"}).code == 0);
    REQUIRE(cli({"acquire", "sem", "--slots", "3", "--expires", "1h"}).code == 0);
    REQUIRE(cli({"acquire", "sem", "--slots", "3", "--expires", "1h"}).code == 0);
    // A holder with one waiter in line.
    REQUIRE(cli({"acquire", "busy", "--expires", "1h"}).code == 0);
    Process waiter = cli.start(run_args("busy", {"--wait", "60s"}, {"true"}));
    // A leader, holding its lead until told.
    Process leader = cli.start(with_command({"elect", "svc", "--value", "v1", "--expires", "1h"},
                                            blocking_command(dir + "/led", dir + "/go")));
    REQUIRE(wait_for_file(dir + "/led"));
    const std::string table = cli.db.table;
    std::vector<Sample> s;
    REQUIRE(sqlock_test::eventually([&] {
        Result r = cli({"metrics"});
        if (r.code != 0) return false;
        auto parsed = parse(r.out);
        if (!parsed) return true;
        s = *parsed;
        return exact(s, "sqlock_lock_waiters", {{"table", table}, {"name", "busy"}}) == 1.0;
    }));
    if (s.empty()) return;  // no parser here
    auto of = [&](const std::string& metric, const std::string& name) {
        return exact(s, metric, {{"table", table}, {"name", name}});
    };
    CHECK(of("sqlock_lock_holders", odd) == 1.0);
    CHECK(of("sqlock_lock_holders", "sem") == 2.0);
    CHECK(of("sqlock_lock_holders", "busy") == 1.0);
    CHECK(of("sqlock_lock_waiters", odd) == 0.0);
    const auto age = of("sqlock_lock_holder_age_seconds", "sem");
    const auto left = of("sqlock_lock_holder_seconds_left", "sem");
    REQUIRE(age);
    REQUIRE(left);
    CHECK(*age >= 0.0);
    CHECK(*age < 600.0);
    CHECK(*left > 3000.0);
    CHECK(*left <= 3600.0);
    const nlohmann::json svc = show_json(cli, "svc");
    REQUIRE(svc.is_object());
    CHECK(of("sqlock_leader_fencing_id", "svc") == svc["id"].get<double>());
    CHECK(of("sqlock_leader_age_seconds", "svc"));
    CHECK_FALSE(of("sqlock_leader_fencing_id", "busy"));
    CHECK(exact(s, "sqlock_lock_names", {{"table", table}}) == 4.0);
    CHECK_FALSE(exact(s, "sqlock_lock_holders", {{"table", table}}));  // nothing summed

    // Bounded: one name of its own (the one with a waiter), the rest summed
    // in series without a name.
    Result bounded = cli({"metrics", "--max-names", "1"});
    REQUIRE(bounded.code == 0);
    auto b = parse(bounded.out);
    REQUIRE(b);
    CHECK(exact(*b, "sqlock_lock_waiters", {{"table", table}, {"name", "busy"}}) == 1.0);
    CHECK_FALSE(exact(*b, "sqlock_lock_holders", {{"table", table}, {"name", "sem"}}));
    CHECK(exact(*b, "sqlock_lock_holders", {{"table", table}}) == 4.0);  // odd, sem x2, svc
    CHECK(exact(*b, "sqlock_lock_waiters", {{"table", table}}) == 0.0);
    CHECK(exact(*b, "sqlock_lock_names", {{"table", table}}) == 4.0);
    Result none = cli({"metrics", "--max-names", "0"});
    REQUIRE(none.code == 0);
    CHECK(exact(*parse(none.out), "sqlock_lock_holders", {{"table", table}}) == 5.0);
    Result bad = cli({"metrics", "--max-names", "-1"});
    CHECK(bad.code == 64);
    check_one_line_error(bad);

    touch(dir + "/go");
    CHECK(leader.wait().code == 0);
    REQUIRE(cli({"release", "busy", "--force"}).code == 0);
    CHECK(waiter.wait().code == 0);
}

TEST_CASE("metrics: a chain blocked by a failed predecessor", "[cli][metrics][after]") {
    Cli cli = fresh_cli();
    REQUIRE(cli(run_args("import", {}, {"false"})).code == 1);
    REQUIRE(cli(run_args("report", {"--after", "import", "--after-within", "1h"}, {"true"})).code ==
            0);
    Result r = cli({"metrics"});
    REQUIRE(r.code == 0);
    auto s = parse(r.out);
    if (!s) return;
    const std::string table = cli.db.table;
    CHECK(exact(*s, "sqlock_job_blocked", {{"table", table}, {"name", "report"}}) == 1.0);
    CHECK(exact(*s, "sqlock_job_blocked", {{"table", table}, {"name", "import"}}) == 0.0);
    CHECK(exact(*s, "sqlock_job_runs",
                {{"table", table}, {"name", "report"}, {"outcome", "after_failed"}}) == 1.0);
    // A skip is not a finished run: no last outcome of its own.
    CHECK_FALSE(exact(*s, "sqlock_job_last_outcome",
                      {{"table", table}, {"name", "report"}, {"outcome", "succeeded"}}));
}
