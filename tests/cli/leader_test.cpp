// `sqlock elect` and `sqlock leader`: one leader at a time among candidates
// on several "hosts" (processes), killed or stopped, and a watcher whose
// account of the changes is what the leaders themselves saw.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using sqlock_test::spawn_options;

namespace {

// A leader's job: enters the witness (a directory only one may make), notes
// "fencing-id value" in `led`, and runs until SIGTERM, when it leaves the
// witness and exits 0. `overlap` gets a line if the witness was taken.
args_t leader_job(const std::string& dir) {
    return {"sh", "-c",
            "mkdir \"$1/leader\" 2>/dev/null || echo \"$SQLOCK_LEADER_VALUE\" >> \"$1/overlap\"\n"
            "echo \"$SQLOCK_ID $SQLOCK_LEADER_VALUE\" >> \"$1/led\"\n"
            "trap 'rmdir \"$1/leader\"; exit 0' TERM\n"
            "while :; do sleep 0.05; done",
            "sh", dir};
}

// The lines of `led`: "id value".
std::vector<std::pair<long long, std::string>> leaders_seen(const std::string& dir) {
    std::vector<std::pair<long long, std::string>> out;
    std::istringstream in(read_file(dir + "/led"));
    long long id = 0;
    std::string value;
    while (in >> id >> value) out.emplace_back(id, value);
    return out;
}

// The watcher's next event, which must come within `bound`.
nlohmann::json next_event(Process& watcher, std::chrono::milliseconds bound = 20s) {
    auto line = watcher.read_line(bound);
    REQUIRE(line);
    INFO(*line);
    return nlohmann::json::parse(*line);
}

}  // namespace

TEST_CASE("elect publishes its value, and leader shows it", "[cli][leader]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    Result none = cli({"leader", "svc"});
    CHECK(none.code == 1);
    CHECK_THAT(none.out, Contains("nobody leads"));
    const nlohmann::json vacant = nlohmann::json::parse(cli({"leader", "svc", "--json"}).out);
    CHECK(vacant["event"] == "vacant");
    CHECK(vacant["value"].is_null());
    CHECK(vacant["id"].is_null());

    Process p =
        cli.start(with_command({"elect", "svc", "--value", "10.0.0.7:8080", "--expires", "10s"},
                               leader_job(dir)),
                  {}, spawn_options().own_group(true));
    // The line, not the file: `>>` creates the file before it writes.
    REQUIRE(sqlock_test::eventually([&] { return !leaders_seen(dir).empty(); }));
    const auto led = leaders_seen(dir);
    REQUIRE(led.size() == 1);
    CHECK(led[0].second == "10.0.0.7:8080");

    Result shown = cli({"leader", "svc", "--json"});
    INFO(shown.err);
    CHECK(shown.code == 0);
    const nlohmann::json j = nlohmann::json::parse(shown.out);
    CHECK(j["event"] == "leader");
    CHECK(j["value"] == "10.0.0.7:8080");
    CHECK(j["id"] == led[0].first);
    CHECK(j["holder"]["pid"] == p.pid());
    CHECK(j["since"].is_string());
    CHECK(j["expires"].is_string());
    Result text = cli({"leader", "svc"});
    CHECK(text.code == 0);
    CHECK_THAT(text.out, Contains("value '10.0.0.7:8080'"));
    // A standby that does not wait: exit 75, as run's busy.
    CHECK(cli(with_command({"elect", "svc", "--wait", "0"}, {"true"})).code == 75);

    p.signal(SIGTERM);
    Result r = p.wait();
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(cli({"leader", "svc"}).code == 1);
}

TEST_CASE("candidates lead one at a time through a kill and a resignation, as the watcher says",
          "[cli][leader][fencing]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    Process watcher = cli.start({"leader", "ha", "--watch", "--json", "--poll", "50ms"}, {},
                                spawn_options().pipe_stdout(true));
    CHECK(next_event(watcher)["event"] == "vacant");

    std::vector<Process> candidates;
    for (int c = 0; c < 3; ++c)
        candidates.push_back(cli.start(
            with_command({"elect", "ha", "--value", "c" + std::to_string(c), "--expires", "2s"},
                         leader_job(dir)),
            {}, spawn_options().own_group(true)));
    auto await_leaders = [&](std::size_t n) {
        return sqlock_test::eventually([&] { return leaders_seen(dir).size() >= n; }, 30s);
    };
    auto candidate_of = [&](const std::string& value) -> Process& {
        return candidates.at(static_cast<std::size_t>(std::stoi(value.substr(1))));
    };
    // Each leader as the watcher reports it: after a vacancy (but the
    // first), its fencing id and value as its own job saw them.
    auto check_reported = [&](std::size_t n) {
        const auto led = leaders_seen(dir);
        REQUIRE(led.size() >= n);
        if (n > 1) CHECK(next_event(watcher)["event"] == "vacant");
        const nlohmann::json e = next_event(watcher);
        CHECK(e["event"] == "leader");
        CHECK(e["id"] == led[n - 1].first);
        CHECK(e["value"] == led[n - 1].second);
        return led[n - 1];
    };

    REQUIRE(await_leaders(1));
    const auto first = check_reported(1);
    // Killed outright: its job gets SIGTERM from the kernel (it leaves the
    // witness), its lock runs out with its lease, and a standby takes over.
    candidate_of(first.second).signal(SIGKILL);
    REQUIRE(await_leaders(2));
    const auto second = check_reported(2);
    CHECK(second.first > first.first);

    // Stopped: the job ends, sqlock resigns, the last standby leads at once.
    const auto stopped = std::chrono::steady_clock::now();
    candidate_of(second.second).signal(SIGTERM);
    REQUIRE(await_leaders(3));
    const double handover =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
    INFO("hand-over after SIGTERM took " << handover << " s");
    // Not a lease's wait (2 s): the resignation hands over.
    CHECK(handover < 1.5);
    Result resigned = candidate_of(second.second).wait();
    CHECK(resigned.code == 0);
    const auto third = check_reported(3);
    CHECK(third.first > second.first);

    candidate_of(third.second).signal(SIGTERM);
    CHECK(candidate_of(third.second).wait().code == 0);
    CHECK(next_event(watcher)["event"] == "vacant");
    CHECK_FALSE(exists(dir + "/overlap"));

    watcher.signal(SIGTERM);
    Result w = watcher.wait();
    CHECK(w.code == 0);
}

TEST_CASE("elect refuses what a leader cannot be, and writes nothing", "[cli][leader]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    for (const args_t& args :
         {args_t{"elect", "a", "b"}, args_t{"elect", "a", "--shared"},
          args_t{"elect", "a", "--slots", "2"}, args_t{"elect", "a", "--once-per", "1d"},
          args_t{"elect", "a", "--value", std::string(257, 'v')},
          args_t{"elect", "a", "--value", "two\nlines"}}) {
        Result r = cli(with_command(args, {"true"}));
        INFO(args.back() << ": " << r.err);
        CHECK(r.code == 64);
        check_one_line_error(r);
    }
    for (const args_t& args :
         {args_t{"leader"}, args_t{"leader", "a", "b"}, args_t{"leader", "a", "--poll", "10ms"},
          args_t{"leader", "a", "--watch", "--poll", "2s"}}) {
        Result r = cli(args);
        CHECK(r.code == 64);
        check_one_line_error(r);
    }
    CHECK(database_state(cli.db) == before);
}
