// The operator commands: acquire, release, list, show, reap, init.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// `export NAME=value` lines of `sqlock acquire`, unquoted.
std::map<std::string, std::string> assignments(const std::string& out) {
    std::map<std::string, std::string> vars;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        REQUIRE_THAT(line, StartsWith("export "));
        auto eq = line.find('=');
        std::string value = line.substr(eq + 1);
        if (value.size() >= 2 && value.front() == '\'') value = value.substr(1, value.size() - 2);
        vars[line.substr(7, eq - 7)] = value;
    }
    return vars;
}

}  // namespace

TEST_CASE("acquire leaves the lock held; release frees it by token", "[cli][admin]") {
    Cli cli = fresh_cli();
    Result taken = cli({"acquire", "maintenance", "--expires", "10m"});
    REQUIRE(taken.code == 0);
    auto vars = assignments(taken.out);
    REQUIRE(vars.count("SQLOCK_TOKEN"));
    CHECK(vars["SQLOCK_LOCKSTRING"] == "maintenance");
    CHECK_THAT(taken.err, Contains("acquired lock 'maintenance'"));
    const std::string token = vars["SQLOCK_TOKEN"];

    // Held after sqlock exited: others are refused.
    CHECK(cli({"run", "maintenance", "--", "true"}).code == 75);
    Result shown = cli({"show", "maintenance", "--json"});
    REQUIRE(shown.code == 0);
    auto row = nlohmann::json::parse(shown.out);
    CHECK(row["id"].get<std::int64_t>() == std::stoll(vars["SQLOCK_ID"]));
    CHECK(row["seconds_left"].get<double>() > 590);

    SECTION("a wrong token is refused with 79, and the lock stays") {
        Result r = cli({"release", "maintenance", "--token", "not-the-token"});
        CHECK(r.code == 79);
        CHECK(r.err_lines() == 1);
        CHECK_THAT(r.err, Contains("not by owner token"));
        CHECK(cli({"show", "maintenance"}).code == 0);
    }
    SECTION("--token releases it") {
        Result r = cli({"release", "maintenance", "--token", token});
        CHECK(r.code == 0);
        CHECK_THAT(r.err, StartsWith("sqlock: released lock 'maintenance'"));
        CHECK(r.out.empty());
        CHECK(cli({"show", "maintenance"}).code == 1);
        // Again: nobody holds it now.
        CHECK(cli({"release", "maintenance", "--token", token}).code == 79);
    }
    SECTION("$SQLOCK_TOKEN releases it") {
        CHECK(cli({"release", "maintenance"}, {{"SQLOCK_TOKEN", token}}).code == 0);
        CHECK(cli({"show", "maintenance"}).code == 1);
    }
    SECTION("--force releases it and says whose it was") {
        Result r = cli({"release", "maintenance", "--force"});
        CHECK(r.code == 0);
        CHECK_THAT(r.err, Contains("which was held by "));
        CHECK_THAT(r.err, Contains(", sqlock"));  // program name of the holder
        Result again = cli({"release", "maintenance", "--force"});
        CHECK(again.code == 0);
        CHECK_THAT(again.err, Contains("was not held"));
    }
    SECTION("without a token or --force, release is a usage error") {
        Result r = cli({"release", "maintenance"});
        CHECK(r.code == 64);
        CHECK(r.err_lines() == 1);
        CHECK(cli({"show", "maintenance"}).code == 0);
    }
}

TEST_CASE("acquire: busy is 75; --json; slots", "[cli][admin]") {
    Cli cli = fresh_cli();
    Result first = cli({"acquire", "window", "--json"});
    REQUIRE(first.code == 0);
    auto j = nlohmann::json::parse(first.out);
    CHECK(j["name"] == "window");
    CHECK(j["token"].get<std::string>().size() == 32);
    Result second = cli({"acquire", "window"});
    CHECK(second.code == 75);
    CHECK(second.err_lines() == 1);
    CHECK(second.out.empty());

    Result slot = cli({"acquire", "pool", "--slots", "3", "--json"});
    REQUIRE(slot.code == 0);
    CHECK(nlohmann::json::parse(slot.out)["lockstring"] == "pool#1");
}

TEST_CASE("list and show: text and JSON", "[cli][admin]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "alpha", "--expires", "1h"}).code == 0);
    REQUIRE(cli({"acquire", "beta", "--expires", "2h"}).code == 0);
    REQUIRE(cli({"acquire", "other", "--expires", "1h"}).code == 0);

    SECTION("list: a table with a header and one line per lock") {
        Result r = cli({"list"});
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, StartsWith("NAME"));
        for (const char* column : {"ID", "HOST", "PID", "USER", "COMMAND", "CREATED (UTC)",
                                   "EXPIRES (UTC)", "LEFT", "STATE"})
            CHECK_THAT(r.out, Contains(column));
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);
        CHECK_THAT(r.out, Contains("alpha"));
        CHECK_THAT(r.out, Contains("sqlock acquire"));
        CHECK_THAT(r.out, Contains("held"));
    }
    SECTION("list PREFIX --json") {
        Result r = cli({"list", "al", "--json"});
        REQUIRE(r.code == 0);
        auto rows = nlohmann::json::parse(r.out);
        REQUIRE(rows.is_array());
        REQUIRE(rows.size() == 1);
        const auto& row = rows[0];
        CHECK(row["name"] == "alpha");
        CHECK(row["expired"] == false);
        CHECK(row["seconds_left"].get<double>() > 3500);
        CHECK(row["holder"]["pid"].get<long>() > 0);
        CHECK_FALSE(row["holder"]["host"].get<std::string>().empty());
        CHECK(row["holder"]["command"] == "sqlock acquire");
        CHECK(row.contains("created"));
        CHECK(row.contains("expires"));
        CHECK(row.contains("locked_by"));
    }
    SECTION("list with no match") {
        Result r = cli({"list", "zzz"});
        CHECK(r.code == 0);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, StartsWith("sqlock: no locks starting with 'zzz'"));
        CHECK(nlohmann::json::parse(cli({"list", "zzz", "--json"}).out).empty());
    }
    SECTION("show NAME") {
        Result r = cli({"show", "beta"});
        REQUIRE(r.code == 0);
        CHECK_THAT(r.out, StartsWith("name:     beta"));
        CHECK_THAT(r.out, Contains("state:    held"));
        CHECK_THAT(r.out, Contains("expires:  "));
        auto row = nlohmann::json::parse(cli({"show", "beta", "--json"}).out);
        CHECK(row["name"] == "beta");
        CHECK(row["seconds_left"].get<double>() > 7000);
    }
    SECTION("show of a free lock exits 1") {
        Result r = cli({"show", "gamma"});
        CHECK(r.code == 1);
        CHECK(r.out.empty());
        CHECK_THAT(r.err, StartsWith("sqlock: lock 'gamma' is not held"));
        CHECK(cli({"show", "gamma", "--quiet"}).err.empty());
    }
}

TEST_CASE("reap removes only expired rows", "[cli][admin]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "short", "--expires", "1s"}).code == 0);
    REQUIRE(cli({"acquire", "long", "--expires", "1h"}).code == 0);
    REQUIRE(sqlock_test::eventually([&] {
        auto row = nlohmann::json::parse(cli({"show", "short", "--json"}).out);
        return row["expired"] == true;
    }));

    Result dry = cli({"reap", "--dry-run"});
    CHECK(dry.code == 0);
    CHECK_THAT(dry.err, StartsWith("sqlock: would delete 1 expired lock ["));
    CHECK_THAT(dry.out, StartsWith("  short (id "));  // the rows alone
    Result still = cli({"show", "short"});            // still there, expired: not held (1)
    CHECK(still.code == 1);
    CHECK_THAT(still.out, Contains("state:    expired"));

    Result reaped = cli({"reap", "--verbose"});
    CHECK(reaped.code == 0);
    CHECK_THAT(reaped.err, StartsWith("sqlock: deleted 1 expired lock ["));
    CHECK(cli({"show", "short"}).code == 1);
    CHECK(cli({"show", "long"}).code == 0);

    auto j = nlohmann::json::parse(cli({"reap", "--json"}).out);
    CHECK(j["count"] == 0);
    CHECK(j["dry_run"] == false);
    Result quiet = cli({"reap", "--quiet"});
    CHECK(quiet.out.empty());
    CHECK(quiet.err.empty());
}

TEST_CASE("init is idempotent and keeps existing locks", "[cli][admin]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "kept"}).code == 0);
    Result r = cli({"init"});
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("is ready"));
    CHECK(r.out.empty());
    CHECK(cli({"init"}).code == 0);
    CHECK(cli({"show", "kept"}).code == 0);
}

TEST_CASE("init creates a table that run can use", "[cli][admin]") {
    Cli cli = fresh_cli();
    const std::string table = "fresh_" + std::to_string(getpid());
    CHECK(cli.bare({"list", "--table", table}, {{"SQLOCK_DB", cli.db.url}}).code == 78);
    CHECK(cli.bare({"init", "--table", table}, {{"SQLOCK_DB", cli.db.url}}).code == 0);
    CHECK(
        cli.bare({"run", "x", "--table", table, "--", "true"}, {{"SQLOCK_DB", cli.db.url}}).code ==
        0);
    if (sqlock_test::is_server_backend())
        sqlock_test::exec_sql(cli.db, "DROP TABLE IF EXISTS " + table);
}

TEST_CASE("show exits 1 for an expired lock, which blocks nobody", "[cli][admin]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "brief", "--expires", "250ms"}).code == 0);
    // Awaited, not slept: the lease ends by the database's clock.
    Result shown;
    REQUIRE(sqlock_test::eventually([&] {
        shown = cli({"show", "brief"});
        return shown.out.find("expired") != std::string::npos;
    }));
    CHECK(shown.code == 1);
    CHECK_THAT(shown.out, Contains("state:    expired"));
    Result json = cli({"show", "brief", "--json"});
    CHECK(json.code == 1);
    CHECK(nlohmann::json::parse(json.out)["expired"] == true);
    // And indeed nobody is blocked by it.
    CHECK(cli({"run", "brief", "--", "true"}).code == 0);
}

TEST_CASE("list pads columns by display width", "[cli][admin]") {
    Cli cli = fresh_cli();
    for (const char* name : {"caf\xc3\xa9-backup", "\xe6\x97\xa5\xe6\x9c\xac", "plain"})
        REQUIRE(cli({"acquire", name}).code == 0);
    Result r = cli({"list"});
    REQUIRE(r.code == 0);
    // Every line's ID column starts at the same screen column.
    std::istringstream lines(r.out);
    std::string line;
    std::vector<std::size_t> id_columns;
    while (std::getline(lines, line)) {
        const auto gap = line.find("  ");
        REQUIRE(gap != std::string::npos);
        const auto id = line.find_first_not_of(' ', gap);
        id_columns.push_back(display_columns(line.substr(0, id)));
    }
    REQUIRE(id_columns.size() == 4);
    for (auto column : id_columns) CHECK(column == id_columns.front());
}

TEST_CASE("renew extends a lock taken with acquire, by its token", "[cli][admin]") {
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
