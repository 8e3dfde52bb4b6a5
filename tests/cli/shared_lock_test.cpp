// `sqlock run NAME --shared`, `acquire --shared`, `show NAME` of a name held
// shared.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;

TEST_CASE("run --shared: shared runs overlap, an exclusive run waits for them",
          "[cli][run][shared]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran", go = dir + "/go";
    Process first =
        cli.start(with_command({"run", "report", "--shared"}, blocking_command(ran, go)));
    REQUIRE(wait_for_file(ran));
    // Another shared run goes beside it; its environment says the mode.
    Result beside = cli({"run", "report", "--shared", "--", "sh", "-c",
                         "echo $SQLOCK_MODE $SQLOCK_NAME; echo \"$SQLOCK_LOCKS\""});
    REQUIRE(beside.code == 0);
    const auto nl = beside.out.find('\n');
    CHECK(beside.out.substr(0, nl) == "shared report");
    CHECK(nlohmann::json::parse(beside.out.substr(nl + 1)).contains("report"));
    // An exclusive run is refused, saying the holders are shared.
    Result exclusive = cli({"run", "report", "--", "true"});
    CHECK(exclusive.code == 75);
    check_one_line_error(exclusive);
    CHECK_THAT(exclusive.err, Contains("shared holders"));
    // show lists the holders with their mode.
    Result shown = cli({"show", "report", "--json"});
    REQUIRE(shown.code == 0);
    const auto json = nlohmann::json::parse(shown.out);
    CHECK(json.at("mode") == "shared");
    CHECK(json.at("holders").size() == 1);
    touch(go);
    CHECK(first.wait().code == 0);
    CHECK(cli({"show", "report"}).code != 0);  // free again
    CHECK(cli({"run", "report", "--", "true"}).code == 0);
}

TEST_CASE("acquire --shared and release by its lockstring", "[cli][acquire][shared]") {
    Cli cli = fresh_cli();
    Result a = cli({"acquire", "nightly", "--shared", "--json"});
    REQUIRE(a.code == 0);
    const auto held = nlohmann::json::parse(a.out);
    CHECK(held.at("mode") == "shared");
    const std::string lockstring = held.at("lockstring");
    CHECK(lockstring.rfind("nightly#shared-", 0) == 0);
    CHECK(cli({"acquire", "nightly"}).code == 75);
    Result r = cli({"release", lockstring, "--token", held.at("token")});
    CHECK(r.code == 0);
    // The last holder gone, the name is free for an exclusive holder.
    CHECK(cli({"acquire", "nightly"}).code == 0);
}

TEST_CASE("run A B --shared takes every name shared, as one set", "[cli][run][shared][set]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string ran = dir + "/ran", go = dir + "/go";
    Process first =
        cli.start(with_command({"run", "ledger", "audit", "--shared"}, blocking_command(ran, go)));
    REQUIRE(wait_for_file(ran));
    // Another shared set of the same names runs beside it.
    Result beside = cli({"run", "audit", "ledger", "--shared", "--", "sh", "-c",
                         "echo $SQLOCK_MODE $SQLOCK_NAME; echo \"$SQLOCK_LOCKS\""});
    REQUIRE(beside.code == 0);
    const auto nl = beside.out.find('\n');
    CHECK(beside.out.substr(0, nl) == "shared audit");
    const auto locks = nlohmann::json::parse(beside.out.substr(nl + 1));
    CHECK(locks.contains("audit"));
    CHECK(locks.contains("ledger"));
    // An exclusive run of either name is refused.
    CHECK(cli({"run", "ledger", "--", "true"}).code == 75);
    CHECK(cli({"run", "audit", "other", "--", "true"}).code == 75);
    touch(go);
    CHECK(first.wait().code == 0);
    CHECK(cli({"run", "ledger", "audit", "--", "true"}).code == 0);
}

TEST_CASE("--shared with --slots or --once-per is a usage error", "[cli][shared][validation]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "a", "--shared", "--slots", "3", "--", "true"},
             {"run", "a", "--shared", "--once-per", "1d", "--", "true"},
             {"acquire", "a", "--shared", "--slots", "2"}}) {
        Result r = cli(args);
        CHECK(r.code == 64);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("--shared"));
    }
    CHECK(database_state(cli.db) == before);
}
