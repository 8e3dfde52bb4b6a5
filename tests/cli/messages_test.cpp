// What sqlock's messages look like: sentences, hints that can be pasted into
// a shell, and never a huge argument echoed whole.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("release --force of a semaphore's name points at its slots", "[cli][messages]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "pool", "--slots", "3"}).code == 0);
    Result r = cli({"release", "pool", "--force"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("1 row of semaphore 'pool'"));
    CHECK_THAT(r.err, Contains("`sqlock release 'pool#1' --force`"));
    CHECK(cli({"show", "pool#1"}).code == 0);  // nothing was released
}

TEST_CASE("a huge argument is not echoed whole", "[cli][messages]") {
    Cli cli = fresh_cli();
    const std::string huge(100000, 'a');
    for (const args_t& args :
         {args_t{"release", huge}, args_t{"list", huge}, args_t{"show", huge}}) {
        CAPTURE(args.front());
        Result r = cli(args, {{"SQLOCK_TOKEN", ""}});
        CHECK(r.err_lines() == 1);
        CHECK(r.err.size() < 2000);
    }
}

TEST_CASE("messages read as sentences and hints can be pasted", "[cli][messages]") {
    Cli cli = fresh_cli();
    SECTION("a semaphore of one slot") {
        REQUIRE(cli({"acquire", "single", "--slots", "1"}).code == 0);
        Result r = cli({"run", "single", "--slots", "1", "--", "true"});
        CHECK(r.code == 75);
        CHECK_THAT(r.err, Contains("the only slot of semaphore 'single'"));
        CHECK(r.err.find("all 1 slots") == std::string::npos);
        Result shown = cli({"show", "single"});
        CHECK(shown.code == 1);
        CHECK_THAT(shown.err, Contains("1 row of semaphore 'single'"));
    }
    SECTION("cxxopts' messages use plain quotes") {
        Result r = cli({"run", "job", "--bogus", "--", "true"});
        CHECK(r.code == 64);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("'bogus'"));
        CHECK(r.err.find("\xE2\x80") == std::string::npos);  // no U+2018/U+2019
    }
    SECTION("a name with a control character is quoted so a shell can take it back") {
        const std::string name = "tab\there";
        Result r = cli({"acquire", name});
        REQUIRE(r.code == 0);
        CHECK_THAT(r.err, Contains("`sqlock release $'tab\\x09here' --token "));
        CHECK(r.err.find('\t') == std::string::npos);
    }
}
