// sqlock doctor: one fact a line on stdout, one line per problem on stderr,
// exit 0 when the setup is right and 78 when it is not. Run against every
// backend and, through PgBouncer, every pool mode (what it reports differs).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;

namespace {

// What the URL under test says about a pooler ("" when nothing).
std::string pooler_in_url() {
    const char* url = std::getenv("SQLOCK_TEST_PG_URL");
    if (sqlock_test::backend() != "postgres" || !url) return "";
    std::string u = url;
    std::size_t at = u.find("pooler=");
    return at == std::string::npos ? "" : u.substr(at + 7);
}

// The value on the line "KEY:   value" of doctor's output ("" if none).
std::string fact(const std::string& out, const std::string& key) {
    std::size_t at = out.find("\n" + key + ":");
    if (at == std::string::npos) return "";
    std::size_t begin = out.find_first_not_of(' ', at + key.size() + 2);
    return out.substr(begin, out.find('\n', begin) - begin);
}

}  // namespace

TEST_CASE("doctor reports the way to the database, one fact a line", "[cli][doctor]") {
    Cli cli = fresh_cli();
    Result r = cli({"doctor"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("backend:"));
    CHECK_THAT(r.out, Contains("wake-ups:"));
    if (sqlock_test::backend() == "sqlite") {
        CHECK_THAT(r.out, Contains("polled"));
        return;
    }
    if (sqlock_test::backend() == "mariadb") {
        CHECK_THAT(r.out, Contains("server version:"));
        CHECK_THAT(r.out, Contains("clock difference:"));
        return;
    }
    CHECK_THAT(r.out, Contains("server version:"));
    CHECK_THAT(r.out, Contains("primary (read-write)"));
    CHECK_THAT(r.out, Contains("clock difference:"));
    const std::string pooler = pooler_in_url();
    if (pooler == "transaction" || pooler == "statement") {
        CHECK_THAT(fact(r.out, "pooler detected"), Contains("transaction or statement"));
        CHECK_THAT(fact(r.out, "wake-ups"), Contains("polled"));
    } else {
        CHECK_THAT(fact(r.out, "pooler detected"), Contains("none, or session pooling"));
        CHECK_THAT(fact(r.out, "wake-ups"), Contains("pushed"));
    }
}

TEST_CASE("doctor --json gives the facts and problems as an object", "[cli][doctor]") {
    Cli cli = fresh_cli();
    Result r = cli({"doctor", "--json"});
    CHECK(r.code == 0);
    auto json = nlohmann::json::parse(r.out);
    const std::string& backend = sqlock_test::backend();
    CHECK(json["facts"]["backend"] == (backend == "postgres" ? "postgresql" : backend));
    CHECK(json["problems"].empty());
}

TEST_CASE("doctor names each problem on one line and exits 78", "[cli][doctor]") {
    if (!sqlock_test::is_server_backend()) return;  // SQLite has no server to misconfigure
    Cli cli = fresh_cli();
    const std::string table = "doctor_missing_" + std::to_string(getpid());
    Result r = cli.bare({"doctor", "--table", table}, {{"SQLOCK_DB", cli.db.url}});
    CHECK(r.code == 78);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Contains("problem: lock table " + table + " does not exist"));
    CHECK_THAT(r.err, Contains("sqlock init"));
    CHECK_THAT(r.out, Contains("missing"));
}
