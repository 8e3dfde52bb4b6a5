// The waiting line on a terminal: one line, rewritten in place, that keeps
// the holder and the time left however narrow the terminal, cleared before
// the command runs, and never shown with --quiet.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

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

}  // namespace

TEST_CASE("waiting shows one line on a terminal, rewritten in place", "[cli][waiting]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("tty-job");
    REQUIRE(held);
    const std::string witness = make_dir() + "/witness";
    Pty pty;
    SpawnOptions how;
    how.stderr_fd = pty.slave();
    Process p = cli.start(
        run_args("tty-job", {"--wait", "60s"}, {"sh", "-c", "echo ran > \"$1\"", "sh", witness}),
        {}, how);
    pty.close_slave();

    // Rewritten every 2 s: the second rewrite is proof enough (20 s is
    // generous for 2 s even on a loaded machine).
    const std::string line = "\r\033[Ksqlock: waiting up to 1m";
    REQUIRE(sqlock_test::eventually([&] { return occurrences(pty.text(), line) >= 2; },
                                    std::chrono::seconds(20)));
    CHECK_THAT(pty.text(), Contains("lock 'tty-job' is held by "));
    CHECK(pty.text().find('\n') == std::string::npos);  // in place: never a new line
    CHECK_FALSE(exists(witness));

    held->release();
    Result r = p.wait();
    CHECK(r.code == 0);
    CHECK(exists(witness));
    CHECK(r.err.empty());  // stderr was the terminal, not the harness's file
    // Cleared before the command ran, so its output starts on a clean line.
    const std::string& seen = pty.text();
    const std::string clear = "\r\033[K";
    REQUIRE(seen.size() >= clear.size());
    CHECK(seen.substr(seen.size() - clear.size()) == clear);
}

TEST_CASE("the waiting line never shows with --quiet, even on a terminal", "[cli][waiting]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("tty-quiet");
    REQUIRE(held);
    auto run_on_terminal = [&](const args_t& options) {
        Pty pty;
        SpawnOptions how;
        how.stderr_fd = pty.slave();
        Process p = cli.start(run_args("tty-quiet", options, {"true"}), {}, how);
        pty.close_slave();
        Result r = p.wait();
        r.err = pty.text();  // everything sqlock wrote to the terminal
        return r;
    };
    // The line is due at once: the wait only has to outlast the first attempt.
    Result loud = run_on_terminal({"--wait", "1500ms"});
    CHECK(loud.code == 75);
    CHECK_THAT(loud.err, Contains("sqlock: waiting up to "));  // the test can see it

    Result quiet = run_on_terminal({"--wait", "1500ms", "--quiet"});
    CHECK(quiet.code == 75);
    CHECK(quiet.err.empty());
}

TEST_CASE("on a narrow terminal the waiting line keeps the holder and the time left",
          "[cli][waiting]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "busy", "--expires", "50m"}).code == 0);
    const auto row = nlohmann::json::parse(cli({"show", "busy", "--json"}).out);
    const auto& h = row["holder"];
    // The process of `acquire` has ended: "host:pid (gone)".
    const std::string holder =
        h["host"].get<std::string>() + ":" + std::to_string(h["pid"].get<long>());
    // Room for "sqlock: host:pid (gone), 49m59s left" and a little more: not
    // for the fixed words, the lock's name, the user or the database.
    const int cols =
        static_cast<int>(display_columns("sqlock: " + holder + " (gone), 49m59s left")) + 3;
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
        CHECK(display_columns(line) < static_cast<std::size_t>(cols));
        CHECK_THAT(line, Contains(holder));
        CHECK_THAT(line, Contains(" left"));
    }
    CHECK(shown >= 1);
    CHECK_THAT(screen, Contains("gave up after waiting 2s500ms"));
}
