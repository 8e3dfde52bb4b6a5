// `sqlock run` and signals: forwarding (SIGQUIT and SIGUSR2 too), release
// after the command exits, interruption while waiting, signals ignored at the
// start staying ignored, and sqlock dying with SIGKILL.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>

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

}  // namespace

TEST_CASE("run: signals sent to sqlock are forwarded, then the lock is released",
          "[cli][signals]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string ready = dir + "/ready", caught = dir + "/caught";
    auto [signo, name] = GENERATE(table<int, std::string>(
        {{SIGTERM, "TERM"}, {SIGINT, "INT"}, {SIGHUP, "HUP"}, {SIGUSR1, "USR1"}}));
    CAPTURE(name);
    args_t run = {"run", "trapped", "--"};
    args_t command = trapping_command(name, ready, caught);
    run.insert(run.end(), command.begin(), command.end());

    Process p = cli.start(run);
    REQUIRE(wait_for_file(ready));
    p.signal(signo);
    Result r = p.wait();
    CHECK(r.code == 0);  // the trap's exit status
    CHECK(read_file(caught) == name + "\n");
    CHECK(r.err.empty());
    CHECK(cli({"show", "trapped"}).code == 1);  // released
}

TEST_CASE("run: a command killed by a forwarded signal gives 128+signal", "[cli][signals]") {
    Cli cli = fresh_cli();
    std::string ready = make_dir() + "/ready";
    Process p =
        cli.start({"run", "victim", "--", "sh", "-c", "touch \"$1\"; exec sleep 30", "sh", ready});
    REQUIRE(wait_for_file(ready));
    // Whether it hits the shell or the exec'd sleep, SIGTERM kills it.
    p.signal(SIGTERM);
    CHECK(p.wait().code == 128 + SIGTERM);
    CHECK(cli({"show", "victim"}).code == 1);
}

TEST_CASE("run: a signal while waiting for the lock ends the wait, the command never runs",
          "[cli][signals]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("contended");
    REQUIRE(held);
    std::string witness = make_dir() + "/witness";
    Process p = cli.start({"run", "contended", "--wait", "30s", "--verbose", "--", "sh", "-c",
                           "echo ran >> " + witness});
    REQUIRE(sqlock_test::eventually([&] { return p.err().find("waiting") != std::string::npos; }));
    auto start = std::chrono::steady_clock::now();
    p.signal(SIGTERM);
    Result r = p.wait();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    CHECK(r.code == 128 + SIGTERM);
    CHECK_THAT(r.err, Contains("interrupted by SIGTERM while waiting for lock 'contended'"));
    CHECK_FALSE(exists(witness));
    CHECK(held->held());
}

TEST_CASE("run: killed with SIGKILL, sqlock takes its command along; the lock frees on expiry",
          "[cli][signals]") {
    // Orphans are re-parented to us, so we can see how the command ended.
    REQUIRE(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
    struct Restore {
        ~Restore() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
    } restore;

    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string pid_file = dir + "/pid", witness = dir + "/witness";
    Process p =
        cli.start({"run", "crashy", "--expires", "2s", "--", "sh", "-c",
                   "echo $$ > \"$1.tmp\"; mv \"$1.tmp\" \"$1\"; exec sleep 30", "sh", pid_file});
    REQUIRE(wait_for_file(pid_file));
    const pid_t command = std::stoi(read_file(pid_file));
    p.signal(SIGKILL);
    CHECK(p.wait().code == 128 + SIGKILL);

    // The command got SIGTERM when sqlock died (PR_SET_PDEATHSIG).
    int status = 0;
    bool reaped =
        sqlock_test::eventually([&] { return waitpid(command, &status, WNOHANG) == command; });
    REQUIRE(reaped);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGTERM);

    // The row stays until its lease ends; a waiting run then takes it over.
    CHECK(cli({"run", "crashy", "--", "true"}).code == 75);
    auto start = std::chrono::steady_clock::now();
    Result r = cli({"run", "crashy", "--wait", "10s", "--", "sh", "-c", "echo ran >> " + witness});
    CHECK(r.code == 0);
    CHECK(count_lines(witness) == 1);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(8));  // not the full wait
}

TEST_CASE("run forwards SIGQUIT and SIGUSR2 to the command, then releases the lock",
          "[cli][signals]") {
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

TEST_CASE("signals ignored when run starts stay ignored for the command", "[cli][signals]") {
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
