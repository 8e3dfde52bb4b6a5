// Bad input: one line on stderr, exit 64 / 69 / 78, and the database is left
// exactly as it was. Also help and version.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"
#include "sqlock/config.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("bad usage exits 64 with one line and leaves the database untouched", "[cli][usage]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "existing"}).code == 0);
    const std::string before = database_state(cli.db);
    std::string witness = make_dir() + "/witness";
    const args_t command = {"--", "sh", "-c", "echo ran >> " + witness};
    auto run_with = [&](args_t options) {
        args_t args = {"run", "job"};
        args.insert(args.end(), options.begin(), options.end());
        args.insert(args.end(), command.begin(), command.end());
        return args;
    };

    const std::vector<args_t> cases = {
        run_with({"--bogus"}),
        run_with({"-x"}),
        run_with({"--expires", "5x"}),
        run_with({"--expires", "0"}),
        run_with({"--expires", "1h30"}),
        run_with({"--expires"}),
        run_with({"--wait", "-5"}),
        run_with({"--wait", "400d"}),
        run_with({"--queue-lease", "50ms"}),
        run_with({"--queue-lease", "2h"}),
        run_with({"--queue-lease", "0"}),
        run_with({"--min-hold", "soon"}),
        run_with({"--slots", "0"}),
        run_with({"--slots", "many"}),
        run_with({"--conflict-exit-code", "256"}),
        run_with({"--on-lost", "maybe"}),
        run_with({"--heartbeat", "--no-heartbeat"}),
        run_with({"--splay", "forever"}),
        run_with({"--once-per", "1d", "--tz", "Mars/Base"}),
        run_with({"--once-per", "7h", "--tz", "Europe/Berlin"}),
        run_with({"--tz", "Europe/Berlin"}),
        run_with({"--retry", "-1"}),
        run_with({"--retry", "101"}),
        run_with({"--retry", "twice"}),
        run_with({"--retry", "2", "--retry-delay", "0"}),
        run_with({"--retry-delay", "5s"}),
        run_with({"--splay", "-1s"}),
        run_with({"--notify", ""}),
        run_with({"--notify", "  "}),
        run_with({"--notify", "true", "--notify-timeout", "0"}),
        run_with({"--notify-output"}),
        run_with({"--notify-skips"}),
        run_with({"--quiet", "--verbose"}),
        run_with({"--table", "bad-name"}),
        run_with({"--table", "1table"}),
        {"run", "job", "sh", "-c", "true"},  // no "--"
        {"run", "job", "--"},                // no command
        {"run", "--", "true"},               // no name
        {"run", "", "--", "true"},           // empty name
        {"run", std::string(200, 'n'), "--", "true"},
        {"acquire"},
        {"acquire", "x", "--expires", "forever"},
        {"release", "existing", "--token", "t", "--force"},
        {"list", "a", "b"},
        {"show"},
        {"reap", "now"},
        {"frobnicate"},
        {},
    };
    for (const auto& args : cases) {
        CAPTURE(args);
        Result r = cli(args);
        CHECK(r.code == 64);
        check_one_line_error(r);
    }
    CHECK_FALSE(exists(witness));
    CHECK(database_state(cli.db) == before);
}

TEST_CASE("a bad duration's message shows the accepted forms", "[cli][usage]") {
    Cli cli = fresh_cli();
    Result r = cli({"run", "job", "--expires", "5x", "--", "true"});
    CHECK(r.code == 64);
    CHECK_THAT(r.err, Contains("--expires"));
    CHECK_THAT(r.err, Contains("'5x'"));
    CHECK_THAT(r.err, Contains("1h30m"));
}

TEST_CASE("configuration problems exit 78 and touch nothing", "[cli][usage]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    SECTION("a lock table that does not exist (valid name)") {
        Result r = cli.bare({"run", "job", "--table", "no_such_table", "--", "true"},
                            {{"SQLOCK_DB", cli.db.url}});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("sqlock init"));
        CHECK(cli.bare({"list", "--table", "no_such_table"}, {{"SQLOCK_DB", cli.db.url}}).code ==
              78);
    }
    if (sqlock_test::backend() == "sqlite") {
        SECTION("a SQLite file that does not exist is not created") {
            std::string missing = make_dir() + "/missing.db";
            Result r = cli.bare({"run", "job", "--db", "sqlite://" + missing, "--", "true"});
            CHECK(r.code == 78);
            check_one_line_error(r);
            CHECK_THAT(r.err, Contains("sqlock init"));
            CHECK_FALSE(exists(missing));
            // init creates it, and then it works.
            CHECK(cli.bare({"init", "--db", "sqlite://" + missing}).code == 0);
            CHECK(cli.bare({"run", "job", "--db", "sqlite://" + missing, "--", "true"}).code == 0);
        }
        SECTION("a malformed SQLite URL is a usage error") {
            Result r = cli.bare({"list", "--db", "sqlite:"});
            CHECK(r.code == 64);
            check_one_line_error(r);
        }
    }
    CHECK(database_state(cli.db) == before);
}

TEST_CASE("an unreachable database exits 69, without the password", "[cli][usage]") {
    Cli cli = fresh_cli();
    if (sqlock_test::backend() == "sqlite") {
        // A local file is never unreachable (69 says "try again later"):
        // `init` of a file in a directory that does not exist is a setting
        // to fix, 78, as a directory given as the file is.
        std::string dir = make_dir() + "/missing";
        Result r = cli.bare({"init", "--db", "sqlite://" + dir + "/locks.db"});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("the directory '" + dir + "' does not exist"));
    } else {
        // Nothing listens on port 1 (postgresql:// or mariadb://).
        const std::string scheme = cli.db.url.substr(0, cli.db.url.find("://"));
        Result r = cli.bare(
            {"run", "job", "--db", scheme + "://u:pw-must-not-show@127.0.0.1:1/x", "--", "true"});
        CHECK(r.code == 69);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("127.0.0.1"));
        CHECK_FALSE(r.err.find("pw-must-not-show") != std::string::npos);
    }
}

TEST_CASE("SQLOCK_DB and --db name the database", "[cli][usage]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "here"}).code == 0);
    CHECK(cli.bare({"show", "here", "--table", cli.db.table}, {{"SQLOCK_DB", cli.db.url}}).code ==
          0);
    // --db wins over SQLOCK_DB.
    CHECK(cli.bare({"show", "here", "--table", cli.db.table, "--db", cli.db.url},
                   {{"SQLOCK_DB", "oracle://wrong/db"}})
              .code == 0);
    CHECK(cli.bare({"show", "here", "--table", cli.db.table, "--db", "oracle://wrong/db"},
                   {{"SQLOCK_DB", cli.db.url}})
              .code == 64);  // a URL sqlock cannot read is bad usage
}

TEST_CASE("help and version", "[cli][usage]") {
    Cli cli = fresh_cli();
    Result version = cli({"--version"});
    CHECK(version.code == 0);
    CHECK_THAT(version.out, StartsWith(std::string("sqlock ") + SQLOCK_VERSION));

    Result help = cli({"--help"});
    CHECK(help.code == 0);
    for (const char* command : {"run", "acquire", "release", "list", "show", "reap", "init"})
        CHECK_THAT(help.out, Contains(std::string("  ") + command + " "));
    CHECK_THAT(help.out, Contains("Exit codes:"));
    CHECK_THAT(help.out, Contains("75"));

    Result run_help = cli({"help", "run"});
    CHECK(run_help.code == 0);
    for (const char* option : {"--expires", "--wait", "--slots", "--min-hold", "--heartbeat",
                               "--no-heartbeat", "--on-lost", "--conflict-exit-code", "--db",
                               "--table", "--quiet", "--verbose", "Exit codes:"})
        CHECK_THAT(run_help.out, Contains(option));
    CHECK(cli({"run", "--help"}).out == run_help.out);
    CHECK(cli({"help", "nope"}).code == 64);
}

TEST_CASE("a mistyped command gets a suggestion", "[cli][usage]") {
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
