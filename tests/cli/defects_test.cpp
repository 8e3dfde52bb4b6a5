// What a new user trips over first: exit codes of show, configuration
// errors, column widths, messages. Run against the real binary on each
// backend.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

using sqlock_test::is_server_backend;

// The test server's URL with its user, password or database replaced.
// SCHEME://USER:PASSWORD@HOST:PORT/DB (postgresql or mariadb)
struct ServerUrl {
    std::string scheme, user, password, hostport, database;
    explicit ServerUrl(const std::string& url) {
        scheme = url.substr(0, url.find("://"));
        const std::string rest = url.substr(url.find("://") + 3);
        const auto colon = rest.find(':'), at = rest.rfind('@'), slash = rest.find('/', at);
        user = rest.substr(0, colon);
        password = rest.substr(colon + 1, at - colon - 1);
        hostport = rest.substr(at + 1, slash - at - 1);
        database = rest.substr(slash + 1);
    }
    std::string str() const {
        return scheme + "://" + user + ":" + password + "@" + hostport + "/" + database;
    }
};

// Columns a terminal gives a line of UTF-8: two for the CJK ideographs the
// tests use, one for every other character.
std::size_t columns(const std::string& text) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte
        n += (c >= 0xE4 && c <= 0xE9) ? 2 : 1;
    }
    return n;
}

}  // namespace

TEST_CASE("show exits 1 for an expired lock, which blocks nobody", "[cli][defects]") {
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

TEST_CASE("a home directory that does not exist is a configuration error", "[cli][defects]") {
    const std::string home = make_dir() + "/nonexistent";
    Result r = cli_test::Cli{}.bare(
        {"run", "job", "--", "true"},
        {{"HOME", home}, {"XDG_STATE_HOME", std::nullopt}, {"SQLOCK_DB", std::nullopt}});
    CHECK(r.code == 78);
    check_one_line_error(r);
    CHECK_THAT(r.err, Contains("--db"));
    CHECK_THAT(r.err, Contains("SQLOCK_DB"));
    CHECK_THAT(r.err, Contains(home));
    CHECK_FALSE(exists(home));  // sqlock never creates a home directory
}

TEST_CASE("init says when the role may not use the table", "[cli][defects]") {
    if (!is_server_backend()) {
        SUCCEED("server backends only: SQLite has no roles");
        return;
    }
    Cli cli = fresh_cli();  // the table exists, made by the owner role
    ServerUrl url(cli.db.url);
    url.user = "sqlock_noaccess";  // same password; no grants on this table
    Result r = cli.bare({"--table", cli.db.table, "init"}, {{"SQLOCK_DB", url.str()}});
    CHECK(r.code == 78);
    check_one_line_error(r);
    // What to grant: the table's rights, and on PostgreSQL its id sequence's.
    const std::string& hint = sqlock_test::backend_context().hooks.missing_grant_hint;
    if (hint.empty())
        sqlock_test::skip_test("what init says to grant: no missing_grant_hint");
    else
        CHECK_THAT(r.err, Contains(hint));
    CHECK(r.err.find("ready") == std::string::npos);
    CHECK(r.err.find(url.password) == std::string::npos);
    // The owner's init still succeeds, saying so.
    Result owner = cli({"init"});
    CHECK(owner.code == 0);
    CHECK_THAT(owner.err, Contains("is ready"));
}

TEST_CASE("a directory as the SQLite file is a configuration error", "[cli][defects]") {
    Cli cli;
    for (const std::string& dir : {std::string("/tmp"), make_dir()}) {
        INFO(dir);
        Result r = cli.bare({"list"}, {{"SQLOCK_DB", "sqlite://" + dir}});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("is a directory"));
    }
}

TEST_CASE("a login the server refuses is a configuration error", "[cli][defects]") {
    if (!is_server_backend()) {
        SUCCEED("server backends only");
        return;
    }
    Cli cli = fresh_cli();
    const ServerUrl good(cli.db.url);
    ServerUrl wrong_password = good, unknown_role = good, unknown_database = good;
    wrong_password.password = "not-the-" + good.password;
    unknown_role.user = "sqlock_no_such_role";
    unknown_database.database = "sqlock_no_such_database";
    for (const ServerUrl& url : {wrong_password, unknown_role, unknown_database}) {
        INFO("user " << url.user << ", database " << url.database);
        Result r = cli.bare({"--table", cli.db.table, "list"}, {{"SQLOCK_DB", url.str()}});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("refused the login"));
        CHECK(r.err.find(url.password) == std::string::npos);
    }
    // Nobody listening stays "unreachable" (69).
    ServerUrl nobody = good;
    nobody.hostport = "127.0.0.1:1";
    std::string url = nobody.str();
    // Pooled URLs have ?pooler= already.
    const std::string& timeout = sqlock_test::backend_context().hooks.connect_timeout_parameter;
    if (!timeout.empty()) url += (url.find('?') == std::string::npos ? "?" : "&") + timeout;
    Result r = cli.bare({"list"}, {{"SQLOCK_DB", url}});
    CHECK(r.code == 69);
}

TEST_CASE("list pads columns by display width", "[cli][defects]") {
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
        id_columns.push_back(columns(line.substr(0, id)));
    }
    REQUIRE(id_columns.size() == 4);
    for (auto column : id_columns) CHECK(column == id_columns.front());
}

TEST_CASE("every malformed database URL exits 64, from --db and SQLOCK_DB alike",
          "[cli][defects]") {
    Cli cli;
    for (const std::string url :
         {"sqlite://rel2.db", "/abs/x.db", "not a url", "oracle://h/db", "sqlite:", ":nothing"}) {
        INFO(url);
        Result given = cli.bare({"--db", url, "list"});
        CHECK(given.code == 64);
        check_one_line_error(given);
        Result from_env = cli.bare({"list"}, {{"SQLOCK_DB", url}});
        CHECK(from_env.code == 64);
        check_one_line_error(from_env);
    }
}

TEST_CASE("a minimum hold longer than the lease is refused", "[cli][defects]") {
    Cli cli = fresh_cli();
    const std::string witness = make_dir() + "/ran";
    Result r = cli({"run", "job", "--expires", "1m", "--min-hold", "5m", "--", "touch", witness});
    CHECK(r.code == 64);
    check_one_line_error(r);
    CHECK_THAT(r.err, Contains("--min-hold 5m is longer than --expires 1m"));
    CHECK_FALSE(exists(witness));
    CHECK(cli({"run", "job", "--expires", "5m", "--min-hold", "5m", "--", "true"}).code == 0);
}

TEST_CASE("a huge argument is not echoed whole", "[cli][defects]") {
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

TEST_CASE("messages read as sentences and hints can be pasted", "[cli][defects]") {
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

TEST_CASE("a hostile holder is escaped once, not twice", "[cli][defects]") {
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
