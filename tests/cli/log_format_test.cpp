// `sqlock run --log-format json`: one JSON object per event on
// stderr, on every backend. Each test reads stderr as a log shipper would:
// every line must parse, and the events must say what happened in order.
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using nlohmann::json;

namespace {

// stderr as events; fails the test on a line that is not a JSON object.
std::vector<json> events_of(const std::string& err) {
    std::vector<json> events;
    std::istringstream in(err);
    std::string line;
    while (std::getline(in, line)) {
        INFO("stderr line: " << line);
        json j;
        REQUIRE_NOTHROW(j = json::parse(line));
        REQUIRE(j.is_object());
        events.push_back(j);
    }
    return events;
}

std::vector<std::string> names_of(const std::vector<json>& events) {
    std::vector<std::string> names;
    for (const auto& e : events) names.push_back(e.at("event").get<std::string>());
    return names;
}

// The first event called `name` (a copy: `events` is often a temporary).
json find_event(const std::vector<json>& events, const std::string& name) {
    for (const auto& e : events)
        if (e.at("event") == name) return e;
    FAIL("no event " << name);
    return nullptr;
}

// What every event carries, whatever it is.
void check_common(const json& e, const std::string& name, const Cli& cli) {
    INFO(e.dump());
    static const std::regex rfc3339(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
    CHECK(std::regex_match(e.at("time").get<std::string>(), rfc3339));
    const std::string level = e.at("level");
    CHECK((level == "info" || level == "notice" || level == "warning" || level == "error"));
    CHECK_FALSE(e.at("message").get<std::string>().empty());
    CHECK(e.at("message").get<std::string>().find('\n') == std::string::npos);
    CHECK(e.at("name") == name);
    CHECK_FALSE(e.at("host").get<std::string>().empty());
    CHECK(e.at("pid").get<long>() > 0);
    const std::string db = e.at("db");
    CHECK(db.substr(0, 6) == cli.db.url.substr(0, 6));
    const std::string password = sqlock_test::password_of(cli.db.url);  // it must appear nowhere
    if (!password.empty()) CHECK(e.dump().find(password) == std::string::npos);
}

}  // namespace

TEST_CASE("run --log-format json: a run is acquired, started, exited, released",
          "[cli][run][log-format]") {
    Cli cli = fresh_cli();
    SECTION("a command that succeeds; its own output is left alone") {
        Result r = cli({"run", "logged", "--log-format", "json", "--", "sh", "-c", "echo out"});
        CHECK(r.code == 0);
        CHECK(r.out == "out\n");
        const auto events = events_of(r.err);
        CHECK(names_of(events) ==
              std::vector<std::string>{"acquired", "started", "exited", "released"});
        for (const auto& e : events) check_common(e, "logged", cli);
        const json acquired = find_event(events, "acquired");
        CHECK(acquired.at("lockstring") == "logged");
        CHECK(acquired.at("lease_seconds") == 3600.0);
        const std::int64_t id = acquired.at("id");
        CHECK(id > 0);
        const json started = find_event(events, "started");
        CHECK(started.at("id") == id);
        CHECK(started.at("command") == "sh");
        CHECK(started.at("child_pid").get<long>() > 0);
        CHECK(started.at("run_id").is_number());
        const json exited = find_event(events, "exited");
        CHECK(exited.at("outcome") == "succeeded");
        CHECK(exited.at("exit_status") == 0);
        CHECK(exited.at("signal").is_null());
        CHECK(exited.at("level") == "info");
        CHECK(find_event(events, "released").at("id") == id);
    }
    SECTION("a command that fails, and one killed by a signal") {
        Result failed = cli({"run", "logged", "--log-format=json", "--", "sh", "-c", "exit 3"});
        CHECK(failed.code == 3);
        const json exited = find_event(events_of(failed.err), "exited");
        CHECK(exited.at("outcome") == "failed");
        CHECK(exited.at("exit_status") == 3);
        CHECK(exited.at("level") == "info");
        Result killed =
            cli({"run", "logged", "--log-format=json", "--", "sh", "-c", "kill -KILL $$"});
        CHECK(killed.code == 128 + SIGKILL);
        const json k = find_event(events_of(killed.err), "exited");
        CHECK(k.at("outcome") == "killed");
        CHECK(k.at("signal") == "SIGKILL");
        CHECK(k.at("exit_status").is_null());
    }
    SECTION("a job stopped at its --max-runtime") {
        Result r = cli({"run", "logged", "--log-format=json", "--max-runtime", "200ms",
                        "--kill-grace", "2s", "--", "sleep", "60"});
        CHECK(r.code == 124);
        const std::vector<json> events = events_of(r.err);
        const json timed_out = find_event(events, "timed_out");
        check_common(timed_out, "logged", cli);
        CHECK(timed_out.at("level") == "error");
        CHECK(timed_out.at("max_runtime_seconds") == 0.2);
        CHECK(timed_out.at("kill_grace_seconds") == 2);
        CHECK(timed_out.at("id") == find_event(events, "acquired").at("id"));
        const json exited = find_event(events, "exited");
        CHECK(exited.at("outcome") == "timed_out");
        CHECK(exited.at("signal") == "SIGTERM");
        CHECK(names_of(events) ==
              std::vector<std::string>{"acquired", "started", "timed_out", "exited", "released"});
    }
    SECTION("SQLOCK_LOG_FORMAT=json does the same; --log-format text overrides it") {
        Result r = cli({"run", "logged", "--", "true"}, {{"SQLOCK_LOG_FORMAT", "json"}});
        CHECK(r.code == 0);
        CHECK(names_of(events_of(r.err)).size() == 4);
        Result text = cli({"run", "logged", "--log-format", "text", "--", "true"},
                          {{"SQLOCK_LOG_FORMAT", "json"}});
        CHECK(text.code == 0);
        CHECK(text.err.empty());
    }
    SECTION("with --verbose the other lines are JSON events too") {
        Result r = cli({"run", "logged", "--log-format", "json", "--verbose", "--", "true"});
        CHECK(r.code == 0);
        const auto events = events_of(r.err);
        const auto names = names_of(events);
        CHECK(std::count(names.begin(), names.end(), "message") >= 2);  // recording, recorded
        for (const auto& e : events) check_common(e, "logged", cli);
    }
}

TEST_CASE("run --log-format json: a skipped run says why", "[cli][run][log-format]") {
    Cli cli = fresh_cli();
    std::string witness = make_dir() + "/witness";
    const args_t job = {"--", "sh", "-c", "echo ran >> " + witness};
    auto run = [&](args_t args, const env_t& env = {}) {
        args.insert(args.begin(), {"run", "skipper", "--log-format", "json"});
        args.insert(args.end(), job.begin(), job.end());
        return cli(args, env);
    };
    SECTION("busy, and the wait running out, name the holder") {
        sqlock::Locker locker = cli.db.open();
        auto held = locker.try_lock("skipper");
        REQUIRE(held);
        Result busy = run({});
        CHECK(busy.code == 75);
        auto events = events_of(busy.err);
        REQUIRE(events.size() == 1);
        check_common(events[0], "skipper", cli);
        CHECK(events[0].at("event") == "skipped");
        CHECK(events[0].at("reason") == "busy");
        CHECK(events[0].at("exit_code") == 75);
        CHECK(events[0].at("holder").at("id") == held->id());
        Result timeout = run({"--wait", "300ms", "--conflict-exit-code", "9"});
        CHECK(timeout.code == 9);
        events = events_of(timeout.err);
        CHECK(names_of(events) == std::vector<std::string>{"waiting", "skipped"});
        const json gave_up = find_event(events, "skipped");
        CHECK(gave_up.at("reason") == "timeout");
        CHECK(gave_up.at("exit_code") == 9);
        CHECK(gave_up.at("holder").at("id") == held->id());
        // --quiet silences the expected outcome, as in text.
        Result quiet = run({"--quiet"});
        CHECK(quiet.code == 75);
        CHECK(quiet.err.empty());
        CHECK_FALSE(exists(witness));
    }
    SECTION("paused") {
        REQUIRE(cli({"pause", "skipper", "--reason", "disk swap"}).code == 0);
        Result r = run({});
        CHECK(r.code == 80);
        const auto events = events_of(r.err);
        CHECK(names_of(events) == std::vector<std::string>{"acquired", "skipped"});
        const json skipped = find_event(events, "skipped");
        check_common(skipped, "skipper", cli);
        CHECK(skipped.at("reason") == "paused");
        CHECK(skipped.at("exit_code") == 80);
        CHECK(skipped.at("pause").at("reason") == "disk swap");
        CHECK(run({"--quiet"}).err.empty());
        CHECK_FALSE(exists(witness));
    }
    SECTION("the --once-per window is done") {
        REQUIRE(run({"--once-per", "1d"}).code == 0);
        Result r = run({"--once-per", "1d"});
        INFO(r.err);
        CHECK(r.code == 0);
        const json skipped = find_event(events_of(r.err), "skipped");
        CHECK(skipped.at("reason") == "window_done");
        CHECK(skipped.at("exit_code") == 0);
        CHECK(skipped.at("done_by").at("outcome") == "succeeded");
        CHECK(skipped.at("window_start").get<std::string>().size() >= 19);
        CHECK(count_lines(witness) == 1);
    }
    SECTION("interrupted while waiting") {
        sqlock::Locker locker = cli.db.open();
        auto held = locker.try_lock("skipper");
        REQUIRE(held);
        args_t args = {"run", "skipper", "--log-format", "json", "--wait", "30s"};
        args.insert(args.end(), job.begin(), job.end());
        Process p = cli.start(args);
        REQUIRE(sqlock_test::eventually(
            [&] { return p.err().find("\"event\":\"waiting\"") != std::string::npos; }));
        p.signal(SIGTERM);
        Result r = p.wait();
        CHECK(r.code == 128 + SIGTERM);
        const auto events = events_of(r.err);
        CHECK(names_of(events) == std::vector<std::string>{"waiting", "skipped"});
        const json waiting = find_event(events, "waiting");
        CHECK(waiting.at("holder").at("id") == held->id());
        CHECK(waiting.at("wait_seconds") == 30.0);
        const json skipped = find_event(events, "skipped");
        CHECK(skipped.at("reason") == "interrupted");
        CHECK(skipped.at("signal") == "SIGTERM");
        CHECK(skipped.at("exit_code") == 128 + SIGTERM);
        CHECK_FALSE(exists(witness));
    }
}

TEST_CASE("run --log-format json: a lost lock, and errors", "[cli][run][log-format]") {
    Cli cli = fresh_cli();
    SECTION("lost while the command runs: lost, then exited; exit 79") {
        std::string dir = make_dir();
        // 3 s: a renewal that a loaded server answers late must not fence
        // the job before the loss is seen (run_test.cpp says more).
        args_t run = {"run", "fragile", "--log-format", "json", "--expires", "3s", "--"};
        for (const auto& a : blocking_command(dir + "/witness", dir + "/go")) run.push_back(a);
        Process p = cli.start(run);
        REQUIRE(wait_for_file(dir + "/witness"));
        REQUIRE(cli({"release", "fragile", "--force"}).code == 0);
        Result r = p.wait();
        CHECK(r.code == 79);
        const auto events = events_of(r.err);
        const auto names = names_of(events);
        INFO(r.err);
        REQUIRE(std::find(names.begin(), names.end(), "lost") != names.end());
        CHECK(std::find(names.begin(), names.end(), "lost") <
              std::find(names.begin(), names.end(), "exited"));
        const json lost = find_event(events, "lost");
        check_common(lost, "fragile", cli);
        CHECK(lost.at("level") == "error");
        CHECK(lost.at("on_lost") == "term");
        CHECK(find_event(events, "exited").at("outcome") == "lost");
    }
    SECTION("a command that is not there: one error event with the exit code") {
        Result r = cli({"run", "errs", "--log-format", "json", "--", "no-such-command-sqlock"});
        CHECK(r.code == 127);
        const auto events = events_of(r.err);
        REQUIRE(events.size() == 1);
        check_common(events[0], "errs", cli);
        CHECK(events[0].at("event") == "error");
        CHECK(events[0].at("level") == "error");
        CHECK(events[0].at("exit_code") == 127);
    }
    SECTION("a bad format is a usage error, in one line of text") {
        Result flag = cli({"run", "errs", "--log-format", "xml", "--", "true"});
        CHECK(flag.code == 64);
        CHECK(flag.err == "sqlock: --log-format must be text or json, got 'xml'\n");
        Result env = cli({"run", "errs", "--", "true"}, {{"SQLOCK_LOG_FORMAT", "JSON "}});
        CHECK(env.code == 64);
        CHECK(env.err == "sqlock: SQLOCK_LOG_FORMAT must be text or json, got 'JSON '\n");
        CHECK(cli({"show", "errs"}).code == 1);  // nothing was taken
    }
    SECTION("a usage error after the format is known is an event") {
        Result r = cli({"run", "errs", "--log-format", "json", "--expires", "soon", "--", "true"});
        CHECK(r.code == 64);
        const auto events = events_of(r.err);
        REQUIRE(events.size() == 1);
        CHECK(events[0].at("event") == "error");
        CHECK(events[0].at("exit_code") == 64);
    }
}
