// What sqlock says when it cannot use the database it was given: a malformed
// URL (64), a directory where the SQLite file should be, a home directory
// that does not exist, a login the server refuses, a role without grants on
// the table (78), a server nobody listens on (69). Always one line, never
// the password.
#include <catch2/catch.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

TEST_CASE("every malformed database URL exits 64, from --db and SQLOCK_DB alike",
          "[cli][database]") {
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

TEST_CASE("a directory as the SQLite file is a configuration error", "[cli][database]") {
    Cli cli;
    for (const std::string& dir : {std::string("/tmp"), make_dir()}) {
        INFO(dir);
        Result r = cli.bare({"list"}, {{"SQLOCK_DB", "sqlite://" + dir}});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("is a directory"));
    }
}

TEST_CASE("a home directory that does not exist is a configuration error", "[cli][database]") {
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

TEST_CASE("a login the server refuses is a configuration error", "[cli][database][needs:server]") {
    // SQLite has no logins.
    Cli cli = fresh_cli();
    const sqlock_test::ServerUrl good(cli.db.url);
    sqlock_test::ServerUrl wrong_password = good, unknown_role = good, unknown_database = good;
    wrong_password.password = "not-the-" + good.password;
    unknown_role.user = "sqlock_no_such_role";
    unknown_database.path = "/sqlock_no_such_database";
    for (const sqlock_test::ServerUrl& url : {wrong_password, unknown_role, unknown_database}) {
        INFO("user " << url.user << ", database " << url.path);
        Result r = cli.bare({"--table", cli.db.table, "list"}, {{"SQLOCK_DB", url.str()}});
        CHECK(r.code == 78);
        check_one_line_error(r);
        CHECK_THAT(r.err, Contains("refused the login"));
        CHECK(r.err.find(url.password) == std::string::npos);
    }
    // Nobody listening stays "unreachable" (69).
    sqlock_test::ServerUrl nobody = good;
    nobody.host = "127.0.0.1";
    nobody.port = "1";
    std::string url = nobody.str();
    // Pooled URLs have ?pooler= already.
    const std::string& timeout = sqlock_test::backend_context().hooks.connect_timeout_parameter;
    if (!timeout.empty()) url += (url.find('?') == std::string::npos ? "?" : "&") + timeout;
    Result r = cli.bare({"list"}, {{"SQLOCK_DB", url}});
    CHECK(r.code == 69);
}

TEST_CASE("init says when the role may not use the table",
          "[cli][database][needs:server][needs:missing_grant_hint]") {
    // SQLite has no roles.
    Cli cli = fresh_cli();  // the table exists, made by the owner role
    sqlock_test::ServerUrl url(cli.db.url);
    url.user = "sqlock_noaccess";  // same password; no grants on this table
    Result r = cli.bare({"--table", cli.db.table, "init"}, {{"SQLOCK_DB", url.str()}});
    CHECK(r.code == 78);
    check_one_line_error(r);
    // What to grant: the table's rights, and on PostgreSQL its id sequence's.
    CHECK_THAT(r.err, Contains(sqlock_test::backend_context().hooks.missing_grant_hint));
    CHECK(r.err.find("ready") == std::string::npos);
    CHECK(r.err.find(url.password) == std::string::npos);
    // The owner's init still succeeds, saying so.
    Result owner = cli({"init"});
    CHECK(owner.code == 0);
    CHECK_THAT(owner.err, Contains("is ready"));
}
