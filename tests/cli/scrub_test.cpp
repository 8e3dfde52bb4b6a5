// Database passwords are hidden from `ps`: the --db value is overwritten in
// argv once parsed. Never print the URLs here: the test server's password
// must not appear in test output.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "cli_harness.hpp"
#include "common/password_scrub.hpp"
#include "text.hpp"

using namespace cli_test;

namespace {

std::string scrubbed(const std::string& url) {
    std::string copy = url;
    for (const auto& [begin, end] : sqlock::text::password_ranges(copy))
        for (std::size_t i = begin; i < end; ++i) copy[i] = '*';
    return copy;
}

}  // namespace

TEST_CASE("password_ranges finds userinfo and query passwords", "[cli][scrub]") {
    CHECK(scrubbed("postgresql://u:secret@host/db") == "postgresql://u:******@host/db");
    CHECK(scrubbed("postgresql://u:p@ss@host:5432/db") == "postgresql://u:****@host:5432/db");
    CHECK(scrubbed("postgresql://u@host/db?password=xy&sslmode=require") ==
          "postgresql://u@host/db?password=**&sslmode=require");
    CHECK(scrubbed("postgresql://host/db?sslpassword=keep") ==
          "postgresql://host/db?sslpassword=keep");
    CHECK(scrubbed("postgresql://u@host/db") == "postgresql://u@host/db");
    CHECK(scrubbed("sqlite:///var/lib/a:b@c.db") == "sqlite:///var/lib/a:b@c.db");
}

TEST_CASE("without_passwords redacts a URL echoed in a message", "[cli][scrub]") {
    CHECK(sqlock_cli::without_passwords("postgresql://u:secret@h/db?password=x&a=b") ==
          "postgresql://u:***@h/db?password=***&a=b");
    CHECK(sqlock_cli::without_passwords("nightly-backup") == "nightly-backup");
}

TEST_CASE("a URL given as the command is echoed without its password", "[cli][scrub]") {
    Cli cli = fresh_cli();
    Result r = cli({"postgresql://u:not-to-be-shown@h/db", "list"});
    CHECK(r.code == 64);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("not-to-be-shown") == std::string::npos);
    CHECK(r.err.find("u:***@h") != std::string::npos);
}

TEST_CASE("scrub_database_passwords rewrites --db values, not the command", "[cli][scrub]") {
    std::vector<std::string> storage = {
        "sqlock", "--db", "postgresql://u:pw@h/d", "run", "x", "--db=postgresql://u:pw2@h/d", "--",
        "cmd",    "--db", "postgresql://u:pw3@h/d"};
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    sqlock_cli::scrub_database_passwords(static_cast<int>(argv.size()), argv.data());
    CHECK(std::string(argv[2]) == "postgresql://u:**@h/d");
    CHECK(std::string(argv[5]) == "--db=postgresql://u:***@h/d");
    CHECK(std::string(argv[9]) == "postgresql://u:pw3@h/d");  // the command's own
}

TEST_CASE("a running sqlock does not show the --db password in ps", "[cli][scrub][needs:server]") {
    // SQLite URLs have no password; every test server's has one.
    Cli cli = fresh_cli();
    std::string url = cli.db.url;
    auto ranges = sqlock::text::password_ranges(url);
    REQUIRE_FALSE(ranges.empty());
    const std::string password = url.substr(ranges[0].first, ranges[0].second - ranges[0].first);
    std::string dir = make_dir();
    const std::string witness = dir + "/witness", go = dir + "/go";
    args_t args = {"run", "scrubbed", "--db", url, "--table", cli.db.table, "--"};
    args_t command = blocking_command(witness, go);
    args.insert(args.end(), command.begin(), command.end());
    Process p = cli.start(args);
    REQUIRE(wait_for_file(witness));
    std::string cmdline = read_file("/proc/" + std::to_string(p.pid()) + "/cmdline");
    bool leaked = cmdline.find(password) != std::string::npos;
    bool still_has_url = cmdline.find("@") != std::string::npos;
    touch(go);
    Result r = p.wait();
    CHECK(r.code == 0);
    CHECK(still_has_url);
    CHECK_FALSE(leaked);
}
