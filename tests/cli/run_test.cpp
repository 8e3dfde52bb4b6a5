// `sqlock run`: exit codes (the release error's too), exclusion, waiting
// (flock(1)'s option names, without a limit), semaphores, heartbeat, loss,
// the lease by default, the minimum hold, the command's lookup in $PATH and
// its environment.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("run: the command's exit status is sqlock's", "[cli][run]") {
    Cli cli = fresh_cli();
    SECTION("success") {
        Result r = cli({"run", "job", "--", "true"});
        CHECK(r.code == 0);
        CHECK(r.err.empty());
    }
    SECTION("the command's own code") {
        CHECK(cli({"run", "job", "--", "sh", "-c", "exit 3"}).code == 3);
    }
    SECTION("a command killed by a signal gives 128+signal") {
        CHECK(cli({"run", "job", "--", "sh", "-c", "kill -KILL $$"}).code == 128 + 9);
    }
    SECTION("a command that cannot be found gives 127, one line naming it") {
        Result r = cli({"run", "job", "--", "no-such-command-sqlock-test"});
        CHECK(r.code == 127);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, StartsWith("sqlock: cannot run 'no-such-command-sqlock-test'"));
    }
    SECTION("a command that cannot be executed gives 126") {
        std::string script = make_dir() + "/not-executable.sh";
        touch(script);
        Result r = cli({"run", "job", "--", script});
        CHECK(r.code == 126);
        CHECK(r.err_lines() == 1);
    }
    // Whatever happened, the lock is free again.
    CHECK(cli({"show", "job"}).code == 1);
}

TEST_CASE("run: the command sees the lock in its environment", "[cli][run]") {
    Cli cli = fresh_cli();
    Result r =
        cli({"run", "env-job", "--", "sh", "-c", "echo $SQLOCK_NAME $SQLOCK_ID $SQLOCK_SLOT"});
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, StartsWith("env-job "));
    CHECK_THAT(r.out, Contains(" 0"));
}

TEST_CASE("run: a held lock is skipped with 75, or --conflict-exit-code", "[cli][run]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("busy-job");
    REQUIRE(held);
    std::string witness = make_dir() + "/witness";

    Result r = cli({"run", "busy-job", "--", "sh", "-c", "echo ran >> " + witness});
    CHECK(r.code == 75);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, StartsWith("sqlock: lock 'busy-job' is held by "));
    // The database, by its (redacted) URL: "[sqlite://...", "[postgresql://...".
    CHECK_THAT(r.err, Contains("[" + cli.db.url.substr(0, cli.db.url.find("://") + 3)));

    CHECK(cli({"run", "busy-job", "--conflict-exit-code", "0", "--", "true"}).code == 0);
    CHECK(cli({"run", "busy-job", "--conflict-exit-code=9", "--", "true"}).code == 9);

    Result quiet = cli({"run", "busy-job", "--quiet", "--", "true"});
    CHECK(quiet.code == 75);
    CHECK(quiet.err.empty());
    CHECK_FALSE(exists(witness));
}

TEST_CASE("run: --wait times out with 75 and says who holds the lock", "[cli][run]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("slow-job");
    REQUIRE(held);
    SECTION("stderr is not a terminal: no progress line, one error line") {
        Result r = cli({"run", "slow-job", "--wait", "700ms", "--", "true"});
        CHECK(r.code == 75);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, StartsWith("sqlock: gave up after waiting "));
        CHECK_THAT(r.err, Contains("lock 'slow-job' is held by "));
    }
    SECTION("--verbose shows the progress line") {
        Result r = cli({"run", "slow-job", "--wait", "700ms", "--verbose", "--", "true"});
        CHECK(r.code == 75);
        CHECK_THAT(r.err, Contains("sqlock: waiting up to 700ms"));
        CHECK_THAT(r.err, Contains("gave up after waiting"));
    }
    SECTION("--conflict-exit-code applies to the timeout too") {
        CHECK(cli({"run", "slow-job", "--wait", "300ms", "--conflict-exit-code", "3", "--", "true"})
                  .code == 3);
    }
}

TEST_CASE("run: --wait gets the lock once it is released", "[cli][run]") {
    Cli cli = fresh_cli();
    sqlock::Locker locker = cli.db.open();
    auto held = locker.try_lock("queued-job");
    REQUIRE(held);
    std::string witness = make_dir() + "/witness";
    Process waiting = cli.start({"run", "queued-job", "--wait", "20s", "--verbose", "--", "sh",
                                 "-c", "echo ran >> " + witness});
    // The progress line proves it is waiting (and not done) before we let go.
    REQUIRE(sqlock_test::eventually(
        [&] { return waiting.err().find("waiting") != std::string::npos; }));
    CHECK_FALSE(exists(witness));
    held->release();
    Result r = waiting.wait();
    CHECK(r.code == 0);
    CHECK(count_lines(witness) == 1);
}

TEST_CASE("run: two runs at once execute the command exactly once", "[cli][run]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    args_t run = {"run", "once"};
    args_t command = blocking_command(witness, go);
    run.push_back("--");
    run.insert(run.end(), command.begin(), command.end());

    Process a = cli.start(run), b = cli.start(run);
    // The winner blocks until `go` exists, so the loser must finish first.
    Process* loser = nullptr;
    REQUIRE(sqlock_test::eventually([&] {
        loser = a.poll() ? &a : b.poll() ? &b : nullptr;
        return loser != nullptr;
    }));
    CHECK(*loser->poll() == 75);
    CHECK_THAT(loser->err(), Contains("lock 'once' is held by "));
    touch(go);
    Process& winner = loser == &a ? b : a;
    CHECK(winner.wait().code == 0);
    CHECK(count_lines(witness) == 1);
}

TEST_CASE("run: --min-hold keeps a quick job from running twice", "[cli][run]") {
    Cli cli = fresh_cli();
    std::string witness = make_dir() + "/witness";
    args_t run = {"run", "quick", "--min-hold", "30s", "--", "sh", "-c", "echo ran >> " + witness};
    CHECK(cli(run).code == 0);
    // The job is over, but the lock is kept: a host whose cron fires later skips.
    CHECK(cli(run).code == 75);
    CHECK(count_lines(witness) == 1);
    nlohmann::json row = show_json(cli, "quick");
    REQUIRE(row.is_object());
    CHECK(row["seconds_left"].get<double>() > 20);
    CHECK(row["seconds_left"].get<double>() <= 30);
}

TEST_CASE("run: --slots N lets N commands run at once", "[cli][run]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    args_t run = {"run", "pool", "--slots", "2", "--"};
    args_t command = blocking_command(witness, go);
    run.insert(run.end(), command.begin(), command.end());

    std::vector<Process> runs;
    for (int i = 0; i < 3; ++i) runs.push_back(cli.start(run));
    int finished = -1;
    REQUIRE(sqlock_test::eventually([&] {
        for (int i = 0; i < 3; ++i)
            if (runs[i].poll()) finished = i;
        return finished >= 0;
    }));
    CHECK(*runs[finished].poll() == 75);
    REQUIRE(sqlock_test::eventually([&] { return count_lines(witness) == 2; }));
    Result listed = cli({"list", "pool#"});
    CHECK_THAT(listed.out, Contains("pool#1"));
    CHECK_THAT(listed.out, Contains("pool#2"));
    touch(go);
    for (int i = 0; i < 3; ++i)
        if (i != finished) CHECK(runs[i].wait().code == 0);
    CHECK(count_lines(witness) == 2);
}

TEST_CASE("run: the heartbeat renews the lease while the command runs", "[cli][run]") {
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    // 3 s, not 1 s: under ASan on a loaded machine renewals every 1/6 s
    // came too late, the job was stopped and the row was gone before `show`
    // saw a renewal.
    args_t run = {"run", "long", "--expires", "3s", "--"};
    args_t command = blocking_command(witness, go);
    run.insert(run.end(), command.begin(), command.end());
    Process p = cli.start(run);
    REQUIRE(wait_for_file(witness));
    nlohmann::json first = show_json(cli, "long");
    REQUIRE(first.is_object());
    // Renewed at a third of the lease: `expires` moves on, the id stays.
    REQUIRE(sqlock_test::eventually([&] {
        nlohmann::json now = show_json(cli, "long");
        return now.is_object() && now["expires"] != first["expires"];
    }));
    CHECK(show_json(cli, "long")["id"] == first["id"]);
    touch(go);
    CHECK(p.wait().code == 0);
    CHECK(cli({"show", "long"}).code == 1);
}

TEST_CASE("run: a lock lost while the command runs", "[cli][run]") {
    // 3 s leases: with 1 s, a loaded server answered a renewal too late, and
    // the job was fenced for a renewal that did not get through before the
    // next one could find the row gone (a lost lock).
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    args_t command = blocking_command(witness, go);

    SECTION("terminates the command and exits 79 by default") {
        args_t run = {"run", "fragile", "--expires", "3s", "--"};
        run.insert(run.end(), command.begin(), command.end());
        Process p = cli.start(run);
        REQUIRE(wait_for_file(witness));
        REQUIRE(cli({"release", "fragile", "--force"}).code == 0);
        Result r = p.wait();
        CHECK(r.code == 79);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, StartsWith("sqlock: lost lock 'fragile'"));
        CHECK_THAT(r.err, Contains("terminating the command"));
    }
    SECTION("--on-lost=ignore lets it finish and keeps its status") {
        args_t run = {"run", "fragile", "--expires", "3s", "--on-lost=ignore", "--"};
        run.insert(run.end(), command.begin(), command.end());
        Process p = cli.start(run);
        REQUIRE(wait_for_file(witness));
        REQUIRE(cli({"release", "fragile", "--force"}).code == 0);
        REQUIRE(sqlock_test::eventually([&] { return p.err().find("lost") != std::string::npos; }));
        CHECK_FALSE(p.poll());
        touch(go);
        Result r = p.wait();
        CHECK(r.code == 0);
        CHECK_THAT(r.err, Contains("letting the command finish"));
    }
    SECTION("without a heartbeat the loss is found at release") {
        args_t run = {"run", "fragile", "--expires", "1s", "--no-heartbeat", "--"};
        run.insert(run.end(), command.begin(), command.end());
        Process p = cli.start(run);
        REQUIRE(wait_for_file(witness));
        // The lease runs out and someone else takes the lock over.
        sqlock::Locker locker = cli.db.open();
        std::optional<sqlock::Lock> taker;
        REQUIRE(sqlock_test::eventually(
            [&] { return (taker = locker.try_lock("fragile")).has_value(); }));
        touch(go);
        Result r = p.wait();
        CHECK(r.code == 79);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, Contains("no longer ours"));
        CHECK(taker->held());
    }
}

TEST_CASE("a minimum hold longer than the lease is refused", "[cli][run]") {
    Cli cli = fresh_cli();
    const std::string witness = make_dir() + "/ran";
    Result r = cli({"run", "job", "--expires", "1m", "--min-hold", "5m", "--", "touch", witness});
    CHECK(r.code == 64);
    check_one_line_error(r);
    CHECK_THAT(r.err, Contains("--min-hold 5m is longer than --expires 1m"));
    CHECK_FALSE(exists(witness));
    CHECK(cli({"run", "job", "--expires", "5m", "--min-hold", "5m", "--", "true"}).code == 0);
}

TEST_CASE("flock's option names: -w/--timeout, -n/--nonblock, -E", "[cli][run]") {
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

TEST_CASE("--wait forever waits until the lock is free", "[cli][run]") {
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

TEST_CASE("run looks the command up in $PATH before it takes the lock", "[cli][run]") {
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

TEST_CASE("the command's environment has SQLOCK_LOCKSTRING and SQLOCK_ID of its lock",
          "[cli][run]") {
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

TEST_CASE("run's default lease is one hour", "[cli][run]") {
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

TEST_CASE(
    "when the command succeeded but the release failed, run exits with the "
    "release error's code",
    "[cli][run]") {
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
