// `sqlock run A B C`, `acquire A B`, `release A B`: several names as one set,
// all or nothing.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

std::vector<std::string> names_held(const Cli& cli, const std::string& prefix) {
    std::vector<std::string> names;
    for (const auto& row : cli.db.open().list(prefix)) names.push_back(row.name);
    return names;
}

}  // namespace

TEST_CASE("run: several names are held together while the job runs", "[cli][run][set]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    const std::string witness = dir + "/ran", go = dir + "/go";
    Process job =
        cli.start(with_command({"run", "s-b", "s-a", "s-c"}, blocking_command(witness, go)));
    REQUIRE(wait_for_file(witness));
    CHECK(names_held(cli, "s-") == std::vector<std::string>{"s-a", "s-b", "s-c"});
    // Any of them held makes another set, or a single run, skip.
    CHECK(cli({"run", "s-c", "s-d", "--", "true"}).code == 75);
    CHECK(cli({"run", "s-a", "--", "true"}).code == 75);
    // The skipped set wrote nothing.
    CHECK(names_held(cli, "s-d").empty());
    touch(go);
    CHECK(job.wait().code == 0);
    CHECK(names_held(cli, "s-").empty());
}

TEST_CASE("run: the job's environment gives every name's fencing id", "[cli][run][set]") {
    Cli cli = fresh_cli();
    Result r = cli({"run", "e-2", "e-1", "--", "sh", "-c",
                    "echo \"$SQLOCK_LOCKS\"; echo $SQLOCK_NAME $SQLOCK_ID"});
    REQUIRE(r.code == 0);
    const auto nl = r.out.find('\n');
    const auto locks = nlohmann::json::parse(r.out.substr(0, nl));
    REQUIRE(locks.size() == 2);
    const std::int64_t id1 = locks.at("e-1"), id2 = locks.at("e-2");
    CHECK(id2 > id1);  // drawn in the names' order
    CHECK(r.out.substr(nl + 1) == "e-1 " + std::to_string(id1) + "\n");
}

TEST_CASE("run: a set that is busy names what is in its way", "[cli][run][set]") {
    Cli cli = fresh_cli();
    auto locker = cli.db.open();
    auto held = locker.lock("w-2");
    Result r = cli({"run", "w-1", "w-2", "w-3", "--", "true"});
    CHECK(r.code == 75);
    check_one_line_error(r);
    CHECK_THAT(r.err, Contains("lock 'w-2' is held by"));
    CHECK(names_held(cli, "w-") == std::vector<std::string>{"w-2"});
    // With a wait, it takes the set once the name is released.
    Process waiter = cli.start(
        {"run", "w-1", "w-2", "w-3", "--wait", "30s", "--log-format", "json", "--", "true"});
    REQUIRE(sqlock_test::eventually(
        [&] { return waiter.err().find("\"event\":\"waiting\"") != std::string::npos; }));
    CHECK(names_held(cli, "w-") == std::vector<std::string>{"w-2"});  // it holds nothing
    held.release();
    CHECK(waiter.wait().code == 0);
}

TEST_CASE("run: bad sets are usage errors and write nothing", "[cli][run][set][validation]") {
    Cli cli = fresh_cli();
    const std::string before = database_state(cli.db);
    Result twice = cli({"run", "x", "y", "x", "--", "true"});
    CHECK(twice.code == 64);
    check_one_line_error(twice);
    CHECK_THAT(twice.err, Contains("'x' is given twice"));
    Result slots = cli({"run", "x", "y", "--slots", "2", "--", "true"});
    CHECK(slots.code == 64);
    CHECK_THAT(slots.err, Contains("--slots takes one semaphore name"));
    Result once = cli({"run", "x", "y", "--once-per", "1d", "--", "true"});
    CHECK(once.code == 64);
    CHECK_THAT(once.err, Contains("--once-per takes one lock name"));
    args_t many = {"run"};
    for (int i = 0; i < 257; ++i) many.push_back("n" + std::to_string(i));
    Result too_many = cli(with_command(many, {"true"}));
    CHECK(too_many.code == 64);
    CHECK_THAT(too_many.err, Contains("at most 256 lock names are taken at once"));
    Result bad_name = cli({"run", "ok", "", "--", "true"});
    CHECK(bad_name.code == 64);
    check_one_line_error(bad_name);
    CHECK(database_state(cli.db) == before);
}

TEST_CASE("run: a pause of any name of a set skips it", "[cli][run][set][pause]") {
    Cli cli = fresh_cli();
    REQUIRE(cli({"pause", "p-2"}).code == 0);
    Result r = cli({"run", "p-1", "p-2", "--", "true"});
    CHECK(r.code == 80);
    CHECK(names_held(cli, "p-").empty());
}

TEST_CASE("acquire and release take several names under one token", "[cli][acquire][set]") {
    Cli cli = fresh_cli();
    Result got = cli({"acquire", "a-1", "a-2", "--json"});
    REQUIRE(got.code == 0);
    const auto j = nlohmann::json::parse(got.out);
    CHECK(j.at("names") == nlohmann::json::array({"a-1", "a-2"}));
    const std::string token = j.at("token");
    CHECK(names_held(cli, "a-") == std::vector<std::string>{"a-1", "a-2"});
    for (const auto& row : cli.db.open().list("a-")) CHECK(row.holder.guid == token);
    // A set that overlaps is busy; releasing with the token frees both.
    CHECK(cli({"acquire", "a-2", "a-3"}).code == 75);
    Result wrong = cli({"release", "a-1", "a-2", "--token", "0123456789abcdef0123456789abcdef"});
    CHECK(wrong.code == 79);
    CHECK(names_held(cli, "a-").size() == 2);
    Result freed = cli({"release", "a-1", "a-2", "--token", token});
    CHECK(freed.code == 0);
    CHECK(names_held(cli, "a-").empty());
}
