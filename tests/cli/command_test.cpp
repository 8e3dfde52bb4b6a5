// The command's rough edges: where output goes, flock(1)'s
// option names, waiting without a limit, suggestions for a mistyped command.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("data on stdout, every notice on stderr", "[cli][command]") {
    Cli cli = fresh_cli();
    SECTION("notices") {
        for (const args_t& args : {args_t{"list"}, args_t{"reap"}, args_t{"init"},
                                   args_t{"release", "nothing", "--force"}}) {
            INFO(args.front());
            Result r = cli(args);
            CHECK(r.code == 0);
            CHECK(r.out.empty());
            CHECK(r.err_lines() == 1);
            CHECK_THAT(r.err, StartsWith("sqlock: "));
        }
    }
    SECTION("show --json of a missing lock prints null and exits 1") {
        Result r = cli({"show", "missing", "--json"});
        CHECK(r.code == 1);
        CHECK(nlohmann::json::parse(r.out).is_null());
    }
    SECTION("data") {
        REQUIRE(cli({"acquire", "held"}).code == 0);
        Result r = cli({"list", "--quiet"});
        CHECK(r.code == 0);
        CHECK_THAT(r.out, StartsWith("NAME"));
        CHECK(r.err.empty());
    }
}

TEST_CASE("flock's option names: -w/--timeout, -n/--nonblock, -E", "[cli][command]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "busy"}).code == 0);
    SECTION("-E sets the conflict exit code") {
        CHECK(cli({"run", "busy", "-E", "3", "--", "true"}).code == 3);
    }
    SECTION("-n and --nonblock do not wait") {
        CHECK(cli({"run", "busy", "-n", "--", "true"}).code == 75);
        CHECK(cli({"acquire", "busy", "--nonblock"}).code == 75);
    }
    SECTION("-w and --timeout wait") {
        for (const char* option : {"-w", "--timeout"}) {
            INFO(option);
            Result r = cli({"run", "busy", option, "300ms", "--", "true"});
            CHECK(r.code == 75);
            CHECK_THAT(r.err, Contains("gave up after waiting 300ms"));
        }
    }
    SECTION("-n with a wait is a contradiction") {
        Result r = cli({"run", "busy", "-n", "-w", "5s", "--", "true"});
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
    }
}

TEST_CASE("--wait forever waits until the lock is free", "[cli][command]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    Result taken = cli({"acquire", "slow", "--json"});
    REQUIRE(taken.code == 0);
    const std::string token = nlohmann::json::parse(taken.out)["token"];
    Process waiter =
        cli.start({"run", "slow", "--wait", "forever", "-v", "--", "touch", dir + "/ran"});
    // It is waiting (the verbose progress line says so, without a limit)...
    REQUIRE(sqlock_test::eventually(
        [&] { return waiter.err().find("without a time limit") != std::string::npos; }));
    CHECK_FALSE(waiter.poll());
    CHECK_FALSE(exists(dir + "/ran"));
    // ...and runs the command once the lock is released.
    REQUIRE(cli({"release", "slow", "--token", token}).code == 0);
    Result r = waiter.wait();
    CHECK(r.code == 0);
    CHECK(exists(dir + "/ran"));
    CHECK(cli({"run", "x", "--wait", "sometimes", "--", "true"}).code == 64);
}

TEST_CASE("a mistyped command gets a suggestion", "[cli][command]") {
    Cli cli;
    for (const auto& [typo, meant] : std::vector<std::pair<std::string, std::string>>{
             {"rnu", "run"}, {"lsit", "list"}, {"aquire", "acquire"}, {"relase", "release"}}) {
        INFO(typo);
        Result r = cli.bare({typo});
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, Contains("did you mean `sqlock " + meant + "`?"));
    }
    Result far = cli.bare({"frobnicate"});
    CHECK(far.code == 64);
    CHECK(far.err.find("did you mean") == std::string::npos);
}

TEST_CASE("renew extends a lock taken with acquire, by its token", "[cli][command]") {
    Cli cli = fresh_cli();
    Result taken = cli({"acquire", "window", "--expires", "1m", "--json"});
    REQUIRE(taken.code == 0);
    const auto lock = nlohmann::json::parse(taken.out);
    const std::string token = lock["token"];
    Result r = cli({"renew", "window", "--token", token, "--expires", "2h"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("renewed lock 'window'"));
    auto shown = nlohmann::json::parse(cli({"show", "window", "--json"}).out);
    CHECK(shown["seconds_left"].get<double>() > 3600);
    CHECK(shown["id"] == lock["id"]);  // the same lock, not a new one
    SECTION("from $SQLOCK_TOKEN") {
        CHECK(cli({"renew", "window", "--expires", "3h"}, {{"SQLOCK_TOKEN", token}}).code == 0);
        shown = nlohmann::json::parse(cli({"show", "window", "--json"}).out);
        CHECK(shown["seconds_left"].get<double>() > 2 * 3600);
    }
    SECTION("a wrong token, or no lock at all, is 79 and changes nothing") {
        Result wrong = cli({"renew", "window", "--token", "not-the-token", "--expires", "5h"});
        CHECK(wrong.code == 79);
        CHECK(wrong.err_lines() == 1);
        shown = nlohmann::json::parse(cli({"show", "window", "--json"}).out);
        CHECK(shown["seconds_left"].get<double>() < 2 * 3600 + 60);
        CHECK(cli({"renew", "nothing", "--token", token}).code == 79);
    }
    SECTION("without a token it is a usage error") {
        CHECK(cli({"renew", "window"}).code == 64);
    }
}

TEST_CASE("list --held and --expired; run --label", "[cli][command]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "brief", "--expires", "250ms"}).code == 0);
    REQUIRE(sqlock_test::eventually([&] {
        return cli({"show", "brief"}).out.find("expired") != std::string::npos;
    }));
    const std::string dir = make_dir();
    args_t run = {"run", "labelled", "--label", "nightly report", "--"};
    for (const auto& word : blocking_command(dir + "/started", dir + "/go")) run.push_back(word);
    Process job = cli.start(run);
    REQUIRE(wait_for_file(dir + "/started"));

    Result held = cli({"list", "--held"});
    CHECK(held.code == 0);
    CHECK_THAT(held.out, Contains("labelled"));
    CHECK_THAT(held.out, Contains("nightly report"));  // the label, not "sh"
    CHECK(held.out.find("brief") == std::string::npos);
    Result expired = cli({"list", "--expired"});
    CHECK_THAT(expired.out, Contains("brief"));
    CHECK(expired.out.find("labelled") == std::string::npos);
    CHECK(cli({"list", "--held", "--expired"}).code == 64);
    auto shown = nlohmann::json::parse(cli({"show", "labelled", "--json"}).out);
    CHECK(shown["holder"]["label"] == "nightly report");
    CHECK(shown["holder"]["command"] == "sh");

    touch(dir + "/go");
    CHECK(job.wait().code == 0);
}

TEST_CASE("run --label with control characters: stored as given, escaped once where shown",
          "[cli][command]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string label = "evil\nlabel\x1b[2J\xff";
    args_t run = {"run", "odd-label", "--label", label, "--"};
    for (const auto& word : blocking_command(dir + "/started", dir + "/go")) run.push_back(word);
    Process job = cli.start(run);
    REQUIRE(wait_for_file(dir + "/started"));
    Result shown = cli({"show", "odd-label"});
    CHECK_THAT(shown.out, Contains("label:    evil\\x0alabel\\x1b[2J\xef\xbf\xbd\n"));
    CHECK_THAT(cli({"list"}).out, Contains("evil\\x0alabel\\x1b[2J"));
    // The byte that is not UTF-8 became U+FFFD; the rest is as given.
    auto json = nlohmann::json::parse(cli({"show", "odd-label", "--json"}).out);
    CHECK(json["holder"]["label"] == "evil\nlabel\x1b[2J\xef\xbf\xbd");
    touch(dir + "/go");
    CHECK(job.wait().code == 0);
    // Cut by the length the row's JSON gives it (\u0001 is six bytes), so
    // a long one is shortened, not refused as too large.
    Result many = cli({"run", "many-controls", "--label", std::string(190, '\x01'), "--", "true"});
    INFO(many.err);
    CHECK(many.code == 0);
}

TEST_CASE("release --force of a semaphore's name points at its slots", "[cli][command]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "pool", "--slots", "3"}).code == 0);
    Result r = cli({"release", "pool", "--force"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("1 row of semaphore 'pool'"));
    CHECK_THAT(r.err, Contains("`sqlock release 'pool#1' --force`"));
    CHECK(cli({"show", "pool#1"}).code == 0);  // nothing was released
}

namespace {

// Runs sqlock with `args` on a terminal `cols` columns wide (script(1)
// allocates it) and returns what the terminal received. Under script's
// terminal sqlock gets SIGHUP when script ends.
std::string on_terminal(const Cli& cli, int cols, const args_t& args) {
    std::string command = "stty cols " + std::to_string(cols) +
                          " rows 24; exec '" SQLOCK_CLI_PATH "' --table " + cli.db.table;
    for (const auto& a : args) command += " '" + a + "'";  // the tests' words have no quote
    sqlock_test::SpawnOptions how;
    how.stderr_to_stdout = true;
    how.clean_env = true;
    const Result r =
        sqlock_test::run({"/usr/bin/script", "-qec", command, "/dev/null"},
                         {{"SQLOCK_DB", cli.db.url}, {"PATH", "/usr/bin:/bin"}, {"TERM", "dumb"}},
                         how, std::chrono::seconds(30));
    if (r.timed_out) FAIL("script(1) did not end within 30 s");
    return r.out;
}

std::size_t columns_of(const std::string& text) {
    std::size_t n = 0;
    for (unsigned char c : text) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace

TEST_CASE("on a narrow terminal the waiting line keeps the holder and the time left",
          "[cli][command]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "busy", "--expires", "50m"}).code == 0);
    const auto row = nlohmann::json::parse(cli({"show", "busy", "--json"}).out);
    const auto& h = row["holder"];
    // The process of `acquire` has ended: "host:pid (gone)".
    const std::string holder =
        h["host"].get<std::string>() + ":" + std::to_string(h["pid"].get<long>());
    // Room for "sqlock: host:pid (gone), 49m59s left" and a little more: not
    // for the fixed words, the lock's name, the user or the database.
    const int cols = static_cast<int>(columns_of("sqlock: " + holder + " (gone), 49m59s left")) + 3;
    const std::string screen =
        on_terminal(cli, cols, {"run", "busy", "-w", "2500ms", "--", "true"});
    INFO(screen);
    // Each rewrite of the line starts with "\r\033[K"; the last message
    // (gave up) is an ordinary line.
    std::size_t shown = 0, at = 0;
    while ((at = screen.find("\r\033[K", at)) != std::string::npos) {
        at += 4;
        std::string line = screen.substr(at, screen.find_first_of("\r\n", at) - at);
        // The line being cleared, and the final message written after it.
        if (line.empty() || line.find("gave up") != std::string::npos) continue;
        ++shown;
        CHECK(columns_of(line) < static_cast<std::size_t>(cols));
        CHECK_THAT(line, Contains(holder));
        CHECK_THAT(line, Contains(" left"));
    }
    CHECK(shown >= 1);
    CHECK_THAT(screen, Contains("gave up after waiting 2s500ms"));
}

TEST_CASE("a holder whose process is gone, and a job kept by its minimum hold", "[cli][command]") {
    Cli cli = fresh_cli();
    SECTION("acquire's process has exited: run, show and list say so") {
        REQUIRE(cli({"acquire", "orphan"}).code == 0);
        Result run = cli({"run", "orphan", "--", "true"});
        CHECK(run.code == 75);
        CHECK_THAT(run.err, Contains("process gone"));
        Result shown = cli({"show", "orphan"});
        CHECK(shown.code == 0);
        CHECK_THAT(shown.out, Contains("process gone"));
        CHECK_THAT(shown.out, Contains(" (gone)"));
        CHECK_THAT(cli({"list"}).out, Contains(" (gone)"));
    }
    SECTION("a quick job under --min-hold: the next run says it finished") {
        Result first = cli({"run", "quick", "--min-hold", "10m", "--", "true"});
        REQUIRE(first.code == 0);
        Result second = cli({"run", "quick", "--", "true"});
        CHECK(second.code == 75);
        CHECK(second.err_lines() == 1);
        CHECK_THAT(second.err, Contains("kept by the minimum hold of"));
        CHECK_THAT(second.err, Contains("whose job finished, until"));
        CHECK(second.err.find("is held by") == std::string::npos);
        Result shown = cli({"show", "quick"});
        CHECK(shown.code == 0);  // it still blocks: held
        CHECK_THAT(shown.out, Contains("kept (by the minimum hold: the job finished)"));
        Result listed = cli({"list"});
        CHECK_THAT(listed.out, Contains("kept"));
    }
}
