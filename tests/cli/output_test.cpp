// Where sqlock writes: data on stdout, every notice on stderr, and data that
// cannot be written to stdout (a full disk, a reader gone) is an error
// (exit 70), never a success.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("data on stdout, every notice on stderr", "[cli][output]") {
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

TEST_CASE("acquire that cannot write the token releases the lock and exits 70",
          "[cli][acquire][output]") {
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

TEST_CASE("data that cannot be written to stdout is an error, not a success", "[cli][output]") {
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
