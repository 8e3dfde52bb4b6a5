// `sqlock run`: exit codes, exclusion, waiting, semaphores, heartbeat, loss.
#include <catch2/catch.hpp>
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
    Cli cli = fresh_cli();
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    args_t command = blocking_command(witness, go);

    SECTION("terminates the command and exits 79 by default") {
        args_t run = {"run", "fragile", "--expires", "1s", "--"};
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
        args_t run = {"run", "fragile", "--expires", "1s", "--on-lost=ignore", "--"};
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
