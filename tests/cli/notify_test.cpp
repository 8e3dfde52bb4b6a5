// `sqlock run --notify CMD`, on every backend: the host that ran the job
// notifies its start and its end (after the lock was released), a host
// that skipped notifies nothing (or a skip, when asked), a notification
// that fails or hangs changes nothing, it never sees the database's
// password, and --notify-output hands it the tail of the job's output.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// A --notify command that writes its environment to DIR/<event>.
const std::string record_event = "env > \"$NOTIFY_DIR/$SQLOCK_EVENT\"";

// The NAME=value lines of an `env` dump, as a map.
std::map<std::string, std::string> notify_env_of(const std::string& path) {
    std::map<std::string, std::string> vars;
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos) vars[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return vars;
}

nlohmann::json runs_of(const Cli& cli, const std::string& name) {
    Result r = cli({"history", name, "--json"});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("run --notify: the start before the job, the end after the release", "[cli][notify]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string go = dir + "/go";
    // The end's notification waits for the test: meanwhile the test looks
    // at the lock and the history as the notification finds them.
    const std::string end_waits =
        "[ \"$SQLOCK_EVENT\" = end ] || exit 0; touch \"$NOTIFY_DIR/ending\"; "
        "while [ ! -e \"$NOTIFY_DIR/go\" ]; do sleep 0.05; done";
    Process p = cli.start(run_args("job", {"--notify", record_event, "--notify", end_waits},
                                   {"sh", "-c", "[ -e \"$NOTIFY_DIR/start\" ] && exit 3"}),
                          {{"NOTIFY_DIR", dir}});
    REQUIRE(wait_for_file(dir + "/ending"));
    CHECK(cli({"show", "job"}).code == 1);  // released before the end is told
    const auto runs = runs_of(cli, "job");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0]["outcome"] == "failed");
    touch(go);
    Result r = p.wait();
    INFO(r.err);
    CHECK(r.code == 3);  // the job saw the start's file: it was told first

    auto start = notify_env_of(dir + "/start");
    CHECK(start["SQLOCK_EVENT"] == "start");
    CHECK(start["SQLOCK_OUTCOME"] == "running");
    CHECK(start["SQLOCK_NAME"] == "job");
    CHECK_FALSE(start["SQLOCK_HOST"].empty());
    CHECK(start.count("SQLOCK_EXIT") == 0);
    auto end = notify_env_of(dir + "/end");
    CHECK(end["SQLOCK_EVENT"] == "end");
    CHECK(end["SQLOCK_OUTCOME"] == "failed");
    CHECK(end["SQLOCK_EXIT"] == "3");
    CHECK(end["SQLOCK_ID"] == start["SQLOCK_ID"]);
    CHECK(std::stoll(end["SQLOCK_ID"]) > 0);
    CHECK(end["SQLOCK_RUN_ID"] == std::to_string(runs[0]["id"].get<long long>()));
    CHECK(std::stod(end["SQLOCK_DURATION"]) >= 0.0);
    CHECK(end.count("SQLOCK_OUTPUT_FILE") == 0);
}

TEST_CASE("run --notify: a host that skipped notifies nothing, unless --notify-skips",
          "[cli][notify]") {
    Cli cli = fresh_cli();
    const std::string ran = make_dir(), skipped = make_dir(), asked = make_dir();
    const std::string witness = ran + "/witness", go = ran + "/go";
    Process holder =
        cli.start(run_args("job", {"--notify", record_event}, blocking_command(witness, go)),
                  {{"NOTIFY_DIR", ran}});
    REQUIRE(wait_for_file(witness));
    Result busy =
        cli(run_args("job", {"--notify", record_event}, {"true"}), {{"NOTIFY_DIR", skipped}});
    CHECK(busy.code == 75);
    Result told = cli(run_args("job", {"--notify", record_event, "--notify-skips"}, {"true"}),
                      {{"NOTIFY_DIR", asked}});
    CHECK(told.code == 75);
    touch(go);
    CHECK(holder.wait().code == 0);

    CHECK(exists(ran + "/start"));
    CHECK(notify_env_of(ran + "/end")["SQLOCK_OUTCOME"] == "succeeded");
    CHECK_FALSE(exists(skipped + "/start"));
    CHECK_FALSE(exists(skipped + "/end"));
    CHECK_FALSE(exists(skipped + "/skip"));
    CHECK_FALSE(exists(asked + "/start"));
    auto skip = notify_env_of(asked + "/skip");
    CHECK(skip["SQLOCK_OUTCOME"] == "busy");
    CHECK(skip["SQLOCK_EXIT"] == "75");
    CHECK(skip["SQLOCK_NAME"] == "job");

    // Paused: a skip too, with its reason.
    REQUIRE(cli({"pause", "job"}).code == 0);
    const std::string paused = make_dir();
    Result p = cli(run_args("job", {"--notify", record_event, "--notify-skips"}, {"true"}),
                   {{"NOTIFY_DIR", paused}});
    CHECK(p.code == 80);
    CHECK(notify_env_of(paused + "/skip")["SQLOCK_OUTCOME"] == "paused");
    CHECK_FALSE(exists(paused + "/start"));
}

TEST_CASE("run --notify: a notification that fails, hangs or is missing changes nothing",
          "[cli][notify]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const auto before = std::chrono::steady_clock::now();
    Result r = cli(run_args("job",
                            {"--notify", "exit 7", "--notify", "sleep 60", "--notify",
                             "no-such-notifier-anywhere", "--notify-timeout", "300ms", "--notify",
                             record_event},
                            {"sh", "-c", "echo done"}),
                   {{"NOTIFY_DIR", dir}});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out == "done\n");
    // Two notifications of 300 ms at most each, not two minutes.
    CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(15));
    CHECK_THAT(r.err, Contains("--notify 'exit 7' for the start event exited 7"));
    CHECK_THAT(r.err, Contains("--notify 'exit 7' for the end event exited 7"));
    CHECK_THAT(r.err, Contains("--notify 'sleep 60' for the end event did not end within 300ms"));
    CHECK_THAT(r.err,
               Contains("--notify 'no-such-notifier-anywhere' for the end event exited 127"));
    // The ones after a failure still ran.
    CHECK(notify_env_of(dir + "/end")["SQLOCK_OUTCOME"] == "succeeded");
    CHECK(cli({"show", "job"}).code == 1);
    CHECK(runs_of(cli, "job")[0]["outcome"] == "succeeded");

    // In JSON: an event each.
    Result j = cli(run_args("job", {"--log-format", "json", "--notify", "exit 7"}, {"true"}));
    CHECK(j.code == 0);
    int failed = 0;
    std::istringstream in(j.err);
    for (std::string line; std::getline(in, line);) {
        const auto e = nlohmann::json::parse(line);
        if (e["event"] != "notify_failed") continue;
        ++failed;
        CHECK(e["exit_status"] == 7);
        CHECK(e["level"] == "error");
    }
    CHECK(failed == 2);
}

TEST_CASE("run --notify: the notification never sees the database's password", "[cli][notify]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string password = sqlock_test::password_of(cli.db.url);
    // Also a password of some other database in the environment.
    const std::string other = "postgresql://someone:other-secret-9431@db.example/app";
    Result r = cli(
        run_args("job", {"--notify", record_event}, {"true"}),
        {{"NOTIFY_DIR", dir},
         {"APP_DATABASE_URL", other},
         {"PGPASSWORD", "pg-secret-2207"},
         {"MYSQL_PWD", "my-secret-5119"},
         {"COPY_OF_THE_PASSWORD", password.empty() ? std::string("unset") : "x" + password + "x"}});
    INFO(r.err);
    REQUIRE(r.code == 0);
    for (const std::string event : {"start", "end"}) {
        const std::string env = read_file(dir + "/" + event);
        REQUIRE_THAT(env, Contains("SQLOCK_EVENT=" + event));
        CHECK(env.find("SQLOCK_DB=") == std::string::npos);
        CHECK(env.find("other-secret-9431") == std::string::npos);
        CHECK(env.find("pg-secret-2207") == std::string::npos);
        CHECK(env.find("my-secret-5119") == std::string::npos);
        if (!password.empty()) CHECK(env.find(password) == std::string::npos);
        CHECK_THAT(env, Contains("NOTIFY_DIR="));  // the rest is there
    }
}

TEST_CASE("run --notify-output: the tail of the job's output, which still goes where it went",
          "[cli][notify]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string keep =
        "[ \"$SQLOCK_EVENT\" = end ] || exit 0; cp \"$SQLOCK_OUTPUT_FILE\" \"$NOTIFY_DIR/tail\"; "
        "echo \"$SQLOCK_OUTPUT_FILE\" > \"$NOTIFY_DIR/path\"";
    // 200,000 lines (about 1.3 MB): the tail is the last 64 KiB.
    Result r = cli(run_args("job", {"--notify", keep, "--notify-output"},
                            {"sh", "-c", "echo first-words >&2; seq 1 200000; exit 4"}),
                   {{"NOTIFY_DIR", dir}});
    CHECK(r.code == 4);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 200000);
    CHECK(r.out.substr(r.out.size() - 7) == "200000\n");
    CHECK_THAT(r.err, Contains("first-words"));
    const std::string tail = read_file(dir + "/tail");
    CHECK(tail.size() == 64 * 1024);
    CHECK(tail.substr(tail.size() - 14) == "199999\n200000\n");
    // stderr is in it too.
    Result small = cli(run_args("job", {"--notify", keep, "--notify-output"},
                                {"sh", "-c", "echo to-out; echo to-err >&2"}),
                       {{"NOTIFY_DIR", dir}});
    CHECK(small.code == 0);
    CHECK(small.out == "to-out\n");
    CHECK_THAT(small.err, Contains("to-err"));
    const std::string both = read_file(dir + "/tail");
    CHECK(both.size() == std::string("to-out\nto-err\n").size());
    CHECK_THAT(both, Contains("to-out\n") && Contains("to-err\n"));
    std::string path = read_file(dir + "/path");
    REQUIRE_FALSE(path.empty());
    path.pop_back();
    CHECK_FALSE(exists(path));  // removed once the notifications ran
}
