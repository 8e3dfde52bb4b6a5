// How list, show and run describe a lock's holder: the command's argv[0]
// only (never its arguments), a label, a process that has gone, a job kept
// by its minimum hold, and whatever another program wrote, escaped once.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("a hostile holder is escaped once, not twice", "[cli][holder]") {
    Cli cli = fresh_cli();
    // A row written by another program, its host holding a tab and a quote.
    sqlock_test::exec_sql(cli.db, "INSERT INTO " + cli.db.table +
                                      " (lockstring, created, expires, locked_by) VALUES "
                                      "('foreign', '2026-01-01 00:00:00.000', "
                                      "'2999-01-01 00:00:00.000', "
                                      "'{\"host\": \"a\\tb''c\", \"pid\": 7}')");
    Result r = cli({"show", "foreign"});
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains("holder:   a\\x09b\\x27c:7"));
    CHECK(r.out.find("\\x5c") == std::string::npos);  // an escape escaped again
}

TEST_CASE("list shows the command's argv[0] only, never its arguments", "[cli][list][holder]") {
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

TEST_CASE("list --held and --expired; run --label", "[cli][holder]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"acquire", "brief", "--expires", "250ms"}).code == 0);
    REQUIRE(sqlock_test::eventually([&] {
        return cli({"show", "brief"}).out.find("expired") != std::string::npos;
    }));
    const std::string dir = make_dir();
    args_t run = {"run", "labelled", "--label", "nightly report", "--"};
    for (const auto& word : blocking_command(dir + "/started", dir + "/go")) run.push_back(word);
    Process job = cli.start(run);
    REQUIRE(wait_for_file(dir + "/started"));

    Result held = cli({"list", "--held"});
    CHECK(held.code == 0);
    CHECK_THAT(held.out, Contains("labelled"));
    CHECK_THAT(held.out, Contains("nightly report"));  // the label, not "sh"
    CHECK(held.out.find("brief") == std::string::npos);
    Result expired = cli({"list", "--expired"});
    CHECK_THAT(expired.out, Contains("brief"));
    CHECK(expired.out.find("labelled") == std::string::npos);
    CHECK(cli({"list", "--held", "--expired"}).code == 64);
    auto shown = nlohmann::json::parse(cli({"show", "labelled", "--json"}).out);
    CHECK(shown["holder"]["label"] == "nightly report");
    CHECK(shown["holder"]["command"] == "sh");

    touch(dir + "/go");
    CHECK(job.wait().code == 0);
}

TEST_CASE("run --label with control characters: stored as given, escaped once where shown",
          "[cli][holder]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string label = "evil\nlabel\x1b[2J\xff";
    args_t run = {"run", "odd-label", "--label", label, "--"};
    for (const auto& word : blocking_command(dir + "/started", dir + "/go")) run.push_back(word);
    Process job = cli.start(run);
    REQUIRE(wait_for_file(dir + "/started"));
    Result shown = cli({"show", "odd-label"});
    CHECK_THAT(shown.out, Contains("label:    evil\\x0alabel\\x1b[2J\xef\xbf\xbd\n"));
    CHECK_THAT(cli({"list"}).out, Contains("evil\\x0alabel\\x1b[2J"));
    // The byte that is not UTF-8 became U+FFFD; the rest is as given.
    auto json = nlohmann::json::parse(cli({"show", "odd-label", "--json"}).out);
    CHECK(json["holder"]["label"] == "evil\nlabel\x1b[2J\xef\xbf\xbd");
    touch(dir + "/go");
    CHECK(job.wait().code == 0);
    // Cut by the length the row's JSON gives it (\u0001 is six bytes), so
    // a long one is shortened, not refused as too large.
    Result many = cli({"run", "many-controls", "--label", std::string(190, '\x01'), "--", "true"});
    INFO(many.err);
    CHECK(many.code == 0);
}

TEST_CASE("a holder whose process is gone, and a job kept by its minimum hold", "[cli][holder]") {
    Cli cli = fresh_cli();
    SECTION("acquire's process has exited: run, show and list say so") {
        REQUIRE(cli({"acquire", "orphan"}).code == 0);
        Result run = cli({"run", "orphan", "--", "true"});
        CHECK(run.code == 75);
        CHECK_THAT(run.err, Contains("process gone"));
        Result shown = cli({"show", "orphan"});
        CHECK(shown.code == 0);
        CHECK_THAT(shown.out, Contains("process gone"));
        CHECK_THAT(shown.out, Contains(" (gone)"));
        CHECK_THAT(cli({"list"}).out, Contains(" (gone)"));
    }
    SECTION("a quick job under --min-hold: the next run says it finished") {
        Result first = cli({"run", "quick", "--min-hold", "10m", "--", "true"});
        REQUIRE(first.code == 0);
        Result second = cli({"run", "quick", "--", "true"});
        CHECK(second.code == 75);
        CHECK(second.err_lines() == 1);
        CHECK_THAT(second.err, Contains("kept by the minimum hold of"));
        CHECK_THAT(second.err, Contains("whose job finished, until"));
        CHECK(second.err.find("is held by") == std::string::npos);
        Result shown = cli({"show", "quick"});
        CHECK(shown.code == 0);  // it still blocks: held
        CHECK_THAT(shown.out, Contains("kept (by the minimum hold: the job finished)"));
        Result listed = cli({"list"});
        CHECK_THAT(listed.out, Contains("kept"));
    }
}
