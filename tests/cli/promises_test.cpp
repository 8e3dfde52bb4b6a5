// Promises the README makes about `sqlock run` and `sqlock acquire` that no
// other test checked: SIGQUIT and SIGUSR2 forwarding, ignored signals staying
// ignored, acquire's exit 70 when the token cannot be written, the release
// error's exit code, the $PATH lookup before the lock, what `list` shows of
// the command, the command's environment, the waiting line on a terminal.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// The mask of ignored signals in /proc/PID/status text ("SigIgn:\t<hex>").
unsigned long long ignored_mask(const std::string& status_line) {
    REQUIRE_THAT(status_line, StartsWith("SigIgn:"));
    return std::stoull(status_line.substr(std::string("SigIgn:").size()), nullptr, 16);
}

unsigned long long bit(int signo) {
    return 1ULL << (signo - 1);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
    return n;
}

}  // namespace

TEST_CASE("promise: run forwards SIGQUIT and SIGUSR2 to the command, then releases the lock",
          "[cli][promises][signals]") {
    auto [signo, name] = GENERATE(table<int, std::string>({{SIGQUIT, "QUIT"}, {SIGUSR2, "USR2"}}));
    CAPTURE(name);
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string ready = dir + "/ready", caught = dir + "/caught";
    Process p = cli.start(run_args("trapped", {}, trapping_command(name, ready, caught)));
    REQUIRE(wait_for_file(ready));
    p.signal(signo);
    Result r = p.wait();
    CHECK(r.code == 0);  // the trap's status: sqlock was not killed (SIGQUIT would dump core)
    CHECK(read_file(caught) == name + "\n");
    CHECK(r.err.empty());
    CHECK(cli({"show", "trapped"}).code == 1);  // released
}

TEST_CASE("promise: signals ignored when run starts stay ignored for the command",
          "[cli][promises][signals]") {
    Cli cli = fresh_cli();
    // grep, started by sqlock itself, reports its own signal dispositions.
    const args_t report = run_args("nohup-job", {}, {"grep", "^SigIgn:", "/proc/self/status"});
    const unsigned long long all =
        bit(SIGINT) | bit(SIGTERM) | bit(SIGHUP) | bit(SIGQUIT) | bit(SIGUSR1) | bit(SIGUSR2);

    SECTION("ignored ones stay ignored, the others do not become ignored") {
        SpawnOptions nohup;
        nohup.ignored_signals = {SIGHUP, SIGQUIT, SIGUSR1};
        Result r = cli.start(report, {}, nohup).wait();
        REQUIRE(r.code == 0);
        const unsigned long long mask = ignored_mask(r.out);
        CHECK((mask & all) == (bit(SIGHUP) | bit(SIGQUIT) | bit(SIGUSR1)));
    }
    SECTION("nothing ignored at the start, nothing ignored by the command") {
        Result r = cli(report);
        REQUIRE(r.code == 0);
        CHECK((ignored_mask(r.out) & all) == 0);
    }
    SECTION("sqlock itself ignores an ignored SIGHUP instead of dying or forwarding it") {
        SpawnOptions nohup;
        nohup.ignored_signals = {SIGHUP};
        std::string dir = make_dir();
        const std::string ready = dir + "/ready", caught = dir + "/caught";
        Process p = cli.start(run_args("nohup-job", {}, trapping_command("USR2", ready, caught)),
                              {}, nohup);
        REQUIRE(wait_for_file(ready));
        p.signal(SIGHUP);
        // A SIGUSR2 after it ends the command: had SIGHUP not been ignored,
        // sqlock would already have died of it (exit 129).
        p.signal(SIGUSR2);
        Result r = p.wait();
        CHECK(r.code == 0);
        CHECK(read_file(caught) == "USR2\n");
        CHECK(cli({"show", "nohup-job"}).code == 1);
    }
}

TEST_CASE("promise: acquire that cannot write the token releases the lock and exits 70",
          "[cli][promises][acquire]") {
    const bool broken_pipe = GENERATE(false, true);
    const args_t extra = GENERATE(args_t{}, args_t{"--json"}, args_t{"--quiet"});
    CAPTURE(broken_pipe, extra);
    Cli cli = fresh_cli();
    SpawnOptions how;
    if (broken_pipe)
        how.stdout_broken_pipe = true;  // the reader went away: EPIPE, or SIGPIPE
    else
        how.stdout_path = "/dev/full";  // ENOSPC
    args_t args = {"acquire", "maintenance"};
    args.insert(args.end(), extra.begin(), extra.end());

    Result r = cli.start(args, {}, how).wait();
    CHECK(r.code == 70);
    CHECK_THAT(r.err, Contains("sqlock: could not write the lock's token to stdout; released "
                               "lock 'maintenance' again"));
    // One line: no "acquired lock ... release it with" before it.
    CHECK(r.err_lines() == 1);
    // Nobody knows the token, so nobody holds the lock.
    CHECK(cli({"show", "maintenance"}).code == 1);
    CHECK(cli({"acquire", "maintenance"}).code == 0);
}

TEST_CASE("promise: data that cannot be written to stdout is an error, not a success",
          "[cli][promises]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "held"}).code == 0);
    SpawnOptions full;
    full.stdout_path = "/dev/full";  // ENOSPC, as a full disk gives
    // `sqlock metrics > f.tmp && mv f.tmp f` (README) must not replace a
    // good file with a truncated one.
    const args_t args =
        GENERATE(args_t{"metrics"}, args_t{"list"}, args_t{"list", "--json"},
                 args_t{"show", "held"}, args_t{"history", "--json"}, args_t{"--help"});
    CAPTURE(args);
    Result r = cli.start(args, {}, full).wait();
    CHECK(r.code == 70);
    CHECK_THAT(r.err, Contains("sqlock: could not write to standard output: No space left on "
                               "device"));
    CHECK(r.err_lines() == 1);
    // The same with somewhere to write: a success.
    CHECK(cli(args).code == 0);
}

TEST_CASE(
    "promise: when the command succeeded but the release failed, run exits with the "
    "release error's code",
    "[cli][promises][run]") {
    // The command's status, and what sqlock must exit with once the lock
    // table has gone while the command ran: 78 (configuration, "run `sqlock
    // init`") when the command succeeded, the command's own status otherwise.
    auto [status, expected] = GENERATE(table<int, int>({{0, 78}, {3, 3}}));
    CAPTURE(status);
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string ready = dir + "/ready", go = dir + "/go";
    Process p = cli.start(run_args(
        "doomed", {},
        {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.02; done; exit \"$3\"", "sh",
         ready, go, std::to_string(status)}));
    REQUIRE(wait_for_file(ready));
    sqlock_test::exec_sql(cli.db, "DROP TABLE \"" + cli.db.table + "\"");
    touch(go);
    Result r = p.wait();
    CHECK(r.code == expected);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, StartsWith("sqlock: the command has ended, but releasing the lock failed: "));
}

TEST_CASE("promise: run looks the command up in $PATH before it takes the lock",
          "[cli][promises][run]") {
    Cli cli = fresh_cli();
    SECTION("with the lock held by someone else, a missing command fails at once") {
        sqlock::Locker locker = cli.db.open();
        auto held = locker.try_lock("typo");
        REQUIRE(held);
        // Had sqlock waited for the lock first, --verbose would show the
        // waiting line and wait() would give up after 20 s.
        Result r =
            cli({"run", "typo", "--wait", "60s", "--verbose", "--", "no-such-command-sqlock-test"});
        CHECK(r.code == 127);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, StartsWith("sqlock: cannot run 'no-such-command-sqlock-test'"));
        CHECK_THAT(r.err, Contains("(lock 'typo' not taken)"));
        CHECK(held->held());
    }
    SECTION("a missing command never takes the lock, so --min-hold keeps nothing") {
        Result r = cli({"run", "typo", "--min-hold", "1h", "--", "no-such-command-sqlock-test"});
        CHECK(r.code == 127);
        CHECK(cli({"show", "typo"}).code == 1);
    }
    SECTION("the search is in $PATH: a program found there runs, one not executable is 126") {
        std::string dir = make_dir();
        {
            std::ofstream(dir + "/sqlock-test-tool") << "#!/bin/sh\necho found in PATH\n";
            std::ofstream(dir + "/sqlock-test-plain") << "#!/bin/sh\necho must not run\n";
        }
        REQUIRE(chmod((dir + "/sqlock-test-tool").c_str(), 0755) == 0);
        REQUIRE(chmod((dir + "/sqlock-test-plain").c_str(), 0644) == 0);
        const env_t path = {{"PATH", dir + ":/usr/bin:/bin"}};
        Result found = cli({"run", "typo", "--", "sqlock-test-tool"}, path);
        CHECK(found.code == 0);
        CHECK(found.out == "found in PATH\n");
        CHECK(cli({"run", "typo", "--", "sqlock-test-tool"}).code == 127);  // not in our PATH

        Result plain = cli({"run", "typo", "--min-hold", "1h", "--", "sqlock-test-plain"}, path);
        CHECK(plain.code == 126);
        CHECK(plain.out.empty());
        CHECK_THAT(plain.err, Contains("(lock 'typo' not taken)"));
        CHECK(cli({"show", "typo"}).code == 1);
    }
}

TEST_CASE("promise: list shows the command's argv[0] only, never its arguments",
          "[cli][promises][list]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string ready = dir + "/ready", go = dir + "/go";
    const std::string secret = "--password=hunter2-sqlock-test";
    Process p =
        cli.start(run_args("secretive", {},
                           {"sh", "-c", "touch \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.02; done",
                            "sh", ready, go, secret}));
    REQUIRE(wait_for_file(ready));
    Result text = cli({"list"});
    Result json = cli({"list", "--json"});
    Result shown = cli({"show", "secretive"});
    touch(go);
    CHECK(p.wait().code == 0);

    REQUIRE(text.code == 0);
    REQUIRE(json.code == 0);
    REQUIRE(shown.code == 0);
    for (const Result* r : {&text, &json, &shown}) {
        CHECK(r->out.find("hunter2") == std::string::npos);
        CHECK(r->out.find("sleep") == std::string::npos);  // the script (argv[2])
    }
    nlohmann::json rows = nlohmann::json::parse(json.out);
    REQUIRE(rows.size() == 1);
    CHECK(rows[0]["holder"]["command"] == "sh");

    // The text table: the COMMAND column of the row says "sh".
    std::istringstream lines(text.out);
    std::string header, row;
    REQUIRE(std::getline(lines, header));
    REQUIRE(std::getline(lines, row));
    auto words = [](const std::string& line) {
        std::istringstream in(line);
        std::vector<std::string> out;
        for (std::string w; in >> w;) out.push_back(w);
        return out;
    };
    std::vector<std::string> columns = words(header), values = words(row);
    auto at = std::find(columns.begin(), columns.end(), "COMMAND");
    REQUIRE(at != columns.end());
    const auto index = static_cast<std::size_t>(at - columns.begin());
    REQUIRE(values.size() > index);
    CHECK(values[index] == "sh");
}

TEST_CASE("promise: the command's environment has SQLOCK_LOCKSTRING and SQLOCK_ID of its lock",
          "[cli][promises][run]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string seen = dir + "/env", go = dir + "/go";
    const args_t command = {
        "sh",
        "-c",
        "printf '%s|%s|%s|%s\\n' \"$SQLOCK_NAME\" \"$SQLOCK_LOCKSTRING\" \"$SQLOCK_SLOT\" "
        "\"$SQLOCK_ID\" > \"$1.tmp\"; mv \"$1.tmp\" \"$1\"; "
        "while [ ! -e \"$2\" ]; do sleep 0.02; done",
        "sh",
        seen,
        go};
    // Values inherited from a caller's environment must not leak through.
    const env_t stale = {{"SQLOCK_LOCKSTRING", "stale"}, {"SQLOCK_ID", "999999999"}};
    sqlock::Locker locker = cli.db.open();

    SECTION("a plain lock") {
        Process p = cli.start(run_args("env-lock", {}, command), stale);
        REQUIRE(wait_for_file(seen));
        nlohmann::json row = show_json(cli, "env-lock");
        REQUIRE(row.is_object());
        CHECK(read_file(seen) ==
              "env-lock|env-lock|0|" + std::to_string(row["id"].get<long long>()) + "\n");
        touch(go);
        CHECK(p.wait().code == 0);
    }
    SECTION("a semaphore slot: the row name and the slot's own id") {
        auto first = locker.try_acquire_slot("env-pool", 3);  // slot 1 is taken
        REQUIRE(first);
        Process p = cli.start(run_args("env-pool", {"--slots", "3"}, command), stale);
        REQUIRE(wait_for_file(seen));
        nlohmann::json row = show_json(cli, "env-pool#2");
        REQUIRE(row.is_object());
        CHECK(row["id"].get<long long>() > first->id());
        CHECK(read_file(seen) ==
              "env-pool|env-pool#2|2|" + std::to_string(row["id"].get<long long>()) + "\n");
        touch(go);
        CHECK(p.wait().code == 0);
    }
}

TEST_CASE("promise: run's default lease is one hour", "[cli][promises][run]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    Process p = cli.start(run_args("hour", {}, blocking_command(witness, go)));
    REQUIRE(wait_for_file(witness));
    nlohmann::json row = show_json(cli, "hour");
    touch(go);
    CHECK(p.wait().code == 0);
    REQUIRE(row.is_object());
    // Both ends are the database's: exact, whatever the machine's speed.
    CHECK(sqlock_test::seconds_between(row["created"], row["expires"]) ==
          Approx(3600).margin(0.002));
}

TEST_CASE("promise: waiting shows one line on a terminal, rewritten in place",
          "[cli][promises][waiting]") {
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

TEST_CASE("promise: the waiting line never shows with --quiet, even on a terminal",
          "[cli][promises][waiting]") {
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
