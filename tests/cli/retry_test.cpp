// `sqlock run --retry N`, on every backend: a job that fails by itself is
// run again under the same lock (the heartbeat goes on, nobody else runs
// it in between), each attempt is a run in the history with its number,
// `check` and `metrics` read the last attempt, a --once-per window is done
// once an attempt succeeded, and sqlock never retries a job it stopped
// itself or after its lock was lost.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// A job that fails until its `n`th attempt (counted in DIR/count), writing
// $SQLOCK_ATTEMPT and $SQLOCK_ID to DIR/attempts on each.
args_t succeeds_on_attempt(const std::string& dir, int n) {
    return {"sh", "-c",
            "c=$(cat \"$1/count\" 2>/dev/null || echo 0); c=$((c+1)); echo $c > \"$1/count\"; "
            "echo \"$SQLOCK_ATTEMPT $SQLOCK_ID\" >> \"$1/attempts\"; [ $c -ge " +
                std::to_string(n) + " ]",
            "sh", dir};
}

nlohmann::json runs_of_job(const Cli& cli, const std::string& name) {
    Result r = cli({"history", name, "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE(
    "run --retry: failing twice then succeeding exits 0 after three attempts, the lock "
    "held throughout",
    "[cli][retry]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    // A 2 s lease; the second wait (2.5 s to 5 s) is longer than the lease:
    // only the heartbeat keeps the lock.
    Process p =
        cli.start(run_args("job", {"--retry", "2", "--retry-delay", "2500ms", "--expires", "2s"},
                           succeeds_on_attempt(dir, 3)));
    // Between the second and the third attempt, another host is refused.
    REQUIRE(eventually([&] { return p.err().find("(attempt 2 of 3)") != std::string::npos; }));
    const std::string other = dir + "/other";
    Result refused = cli(run_args("job", {}, {"touch", other}));
    CHECK(refused.code == 75);
    CHECK_FALSE(exists(other));
    Result r = p.wait();
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("exited 1 (attempt 1 of 3); running it again in"));

    // Each attempt knew its number and ran under the one lock.
    const std::string attempts = read_file(dir + "/attempts");
    const std::string id = attempts.substr(2, attempts.find('\n') - 2);
    CHECK(attempts == "1 " + id + "\n2 " + id + "\n3 " + id + "\n");

    const auto runs = runs_of_job(cli, "job");
    REQUIRE(runs.size() == 3);  // newest first
    for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(runs[i]["attempt"] == 3 - i);
        CHECK(std::to_string(runs[i]["fencing_id"].get<long long>()) == id);
    }
    CHECK(runs[0]["outcome"] == "succeeded");
    CHECK(runs[1]["outcome"] == "failed");
    CHECK(runs[2]["outcome"] == "failed");
    CHECK(runs[1]["exit_status"] == 1);

    // check and metrics read the last attempt.
    Result check = cli({"check", "job", "--max-age", "1h"});
    CHECK(check.code == 0);
    CHECK_THAT(check.out, Contains("SQLOCK OK") && Contains("(attempt 3)"));
    Result metrics = cli({"metrics"});
    CHECK(metrics.code == 0);
    CHECK_THAT(metrics.out, Contains("sqlock_job_last_run_attempt{table=\"" + cli.db.table +
                                     "\",name=\"job\"} 3"));
    Result text = cli({"history", "job"});
    CHECK_THAT(text.out, Contains("ATTEMPT"));

    // A later run of the same name is a new hold: attempt 1 again.
    CHECK(cli(run_args("job", {}, {"true"})).code == 0);
    CHECK(runs_of_job(cli, "job")[0]["attempt"] == 1);
}

TEST_CASE("run --retry: the last attempt's status when all fail; none after the lock was lost",
          "[cli][retry]") {
    Cli cli = fresh_cli();
    SECTION("every attempt fails") {
        const std::string dir = make_dir();
        Result r = cli(run_args("job", {"--retry", "1", "--retry-delay", "10ms"},
                                {"sh", "-c", "echo x >> \"$1/attempts\"; exit 5", "sh", dir}));
        CHECK(r.code == 5);
        CHECK(count_lines(dir + "/attempts") == 2);
        const auto runs = runs_of_job(cli, "job");
        REQUIRE(runs.size() == 2);
        CHECK(runs[0]["outcome"] == "failed");
        CHECK(runs[0]["attempt"] == 2);
        Result check = cli({"check", "job", "--max-age", "1h"});
        CHECK(check.code == 2);  // CRITICAL: no success
        CHECK_THAT(check.out, Contains("failed (exit 5)") && Contains("(attempt 2)"));
    }
    SECTION("the lock is lost while waiting to retry") {
        const std::string dir = make_dir();
        Process p =
            cli.start(run_args("job", {"--retry", "3", "--retry-delay", "1m", "--expires", "3s"},
                               {"sh", "-c", "echo x >> \"$1/attempts\"; exit 1", "sh", dir}));
        REQUIRE(eventually([&] { return p.err().find("running it again") != std::string::npos; }));
        REQUIRE(cli({"release", "job", "--force"}).code == 0);
        Result r = p.wait();
        INFO(r.err);
        CHECK(r.code == 79);
        CHECK_THAT(r.err, Contains("not retrying"));
        CHECK(count_lines(dir + "/attempts") == 1);
        CHECK(runs_of_job(cli, "job").size() == 1);
    }
    SECTION("sqlock stopped the job at its --max-runtime") {
        const std::string dir = make_dir();
        Result r =
            cli(run_args("job",
                         {"--retry", "3", "--retry-delay", "10ms", "--max-runtime", "300ms",
                          "--kill-grace", "100ms"},
                         {"sh", "-c", "echo x >> \"$1/attempts\"; exec sleep 30", "sh", dir}));
        CHECK(r.code == 124);
        CHECK(count_lines(dir + "/attempts") == 1);
        CHECK(runs_of_job(cli, "job")[0]["outcome"] == "timed_out");
    }
}

TEST_CASE("run --retry --once-per: the window is done once an attempt succeeded",
          "[cli][retry][once-per]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    Result first =
        cli(run_args("job", {"--once-per", "1d", "--retry", "1", "--retry-delay", "10ms"},
                     succeeds_on_attempt(dir, 2)));
    INFO(first.err);
    CHECK(first.code == 0);
    CHECK(count_lines(dir + "/attempts") == 2);
    const auto runs = runs_of_job(cli, "job");
    REQUIRE(runs.size() == 2);
    CHECK(runs[0]["window_start"] == runs[1]["window_start"]);
    CHECK(runs[0]["attempt"] == 2);
    Result again =
        cli(run_args("job", {"--once-per", "1d", "--verbose"}, {"touch", dir + "/again"}));
    CHECK(again.code == 0);
    CHECK_THAT(again.err, Contains("is done"));
    CHECK_FALSE(exists(dir + "/again"));
}
