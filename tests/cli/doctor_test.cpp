// sqlock doctor: one fact a line on stdout, one line per problem on stderr,
// exit 0 when the setup is right and 78 when it is not. Run against every
// backend and, through PgBouncer, every pool mode (what it reports differs).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using sqlock_test::DoctorFact;

namespace {

// True when doctor's output has a line "KEY: ...".
bool has_fact(const std::string& out, const std::string& key) {
    return ("\n" + out).find("\n" + key + ":") != std::string::npos;
}

// The value on the line "KEY:   value" of doctor's output ("" if none).
std::string fact(const std::string& text, const std::string& key) {
    const std::string out = "\n" + text;
    std::size_t at = out.find("\n" + key + ":");
    if (at == std::string::npos) return "";
    std::size_t begin = out.find_first_not_of(' ', at + key.size() + 2);
    return out.substr(begin, out.find('\n', begin) - begin);
}

}  // namespace

TEST_CASE("doctor reports the way to the database, one fact a line",
          "[cli][doctor][needs:doctor_facts]") {
    Cli cli = fresh_cli();
    Result r = cli({"doctor"});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("backend:"));
    CHECK_THAT(r.out, Contains("wake-ups:"));
    // The facts of this backend, from its test context.
    const auto facts = sqlock_test::backend_context().hooks.doctor_facts;
    for (const DoctorFact& expected : facts(cli.db.url).facts) {
        INFO(expected.key);
        CHECK(has_fact(r.out, expected.key));
        CHECK_THAT(fact(r.out, expected.key), Contains(expected.contains));
    }
}

TEST_CASE("doctor --json gives the facts and problems as an object",
          "[cli][doctor][needs:doctor_facts]") {
    Cli cli = fresh_cli();
    Result r = cli({"doctor", "--json"});
    CHECK(r.code == 0);
    auto json = nlohmann::json::parse(r.out);
    CHECK(json["problems"].empty());
    const auto facts = sqlock_test::backend_context().hooks.doctor_facts;
    CHECK(json["facts"]["backend"] == facts(cli.db.url).backend);
}

TEST_CASE("doctor names each problem on one line and exits 78", "[cli][doctor]") {
    Cli cli = fresh_cli();
    const std::string table = "doctor_missing_" + std::to_string(getpid());
    Result r = cli.bare({"doctor", "--table", table}, {{"SQLOCK_DB", cli.db.url}});
    CHECK(r.code == 78);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Contains("problem: lock table " + table + " does not exist"));
    CHECK_THAT(r.err, Contains("sqlock init"));
    CHECK_THAT(r.out, Contains("missing"));
}

TEST_CASE("doctor reports the run history and pauses tables, and asks for init when one is missing",
          "[cli][doctor][upgrade]") {
    Cli cli = fresh_cli();
    const std::string runs = "run history table " + cli.db.table + "_runs";
    const std::string pauses = "pauses table " + cli.db.table + "_pauses";
    Result ok = cli({"doctor"});
    INFO(ok.err);
    CHECK(ok.code == 0);
    CHECK_THAT(fact(ok.out, runs), Catch::Matchers::StartsWith("present"));
    CHECK_THAT(fact(ok.out, pauses), Catch::Matchers::StartsWith("present"));
    if (sqlock_test::is_server_backend()) CHECK_THAT(fact(ok.out, pauses), Contains("may use it"));

    // A lock table made before sqlock had pauses: a problem line naming
    // init, the same exit code as doctor's other problems (78).
    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_pauses");
    Result one = cli({"doctor"});
    CHECK(one.code == 78);
    CHECK(one.err_lines() == 1);
    CHECK_THAT(one.err,
               Contains("problem: " + pauses + " does not exist") && Contains("sqlock init"));
    CHECK(fact(one.out, pauses) == "missing");
    CHECK_THAT(fact(one.out, runs), Catch::Matchers::StartsWith("present"));
    auto json = nlohmann::json::parse(cli({"doctor", "--json"}).out);
    CHECK(json["facts"][pauses] == "missing");
    CHECK(json["problems"].size() == 1);

    sqlock_test::exec_sql(cli.db, "DROP TABLE " + cli.db.table + "_runs");
    Result two = cli({"doctor"});
    CHECK(two.code == 78);
    CHECK(two.err_lines() == 2);
    CHECK_THAT(two.err, Contains("problem: " + runs + " does not exist"));
    CHECK(fact(two.out, runs) == "missing");
    // Locking itself still works meanwhile, and init adds both.
    CHECK(cli({"acquire", "job"}).code == 0);
    CHECK(cli({"init"}).code == 0);
    Result fixed = cli({"doctor"});
    INFO(fixed.err);
    CHECK(fixed.code == 0);
    CHECK(fixed.err.empty());
    CHECK_THAT(fact(fixed.out, pauses), Catch::Matchers::StartsWith("present"));
}

TEST_CASE("doctor names the side table a user lacks a privilege on",
          "[cli][doctor][privileges][needs:server]") {
    // SQLite's access is the file's.
    Cli cli = fresh_cli();
    const std::string url = sqlock_test::least_privileged(cli.db).url;
    // Standard SQL, the same on every server: all but DELETE on the pauses.
    sqlock_test::exec_sql(cli.db,
                          "REVOKE DELETE ON " + cli.db.table + "_pauses FROM sqlock_noaccess");
    Result r = cli.bare({"doctor", "--table", cli.db.table}, {{"SQLOCK_DB", url}});
    INFO(r.err);
    CHECK(r.code == 78);
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Contains("pauses table") && Contains("DELETE"));
    CHECK_THAT(fact(r.out, "pauses table " + cli.db.table + "_pauses"),
               Contains("sqlock_noaccess") && Contains("lacks privileges"));
    CHECK_THAT(fact(r.out, "run history table " + cli.db.table + "_runs"), Contains("may use it"));
    CHECK_THAT(fact(r.out, "lock table " + cli.db.table), Contains("may use it"));
}

TEST_CASE("a paused job does not run for a user who may not read the pauses table",
          "[cli][doctor][privileges][pause][needs:server]") {
    // SQLite's access is the file's.
    Cli cli = fresh_cli();
    REQUIRE(cli({"pause", "nightly", "--reason", "restore in progress"}).code == 0);
    const std::string url = sqlock_test::least_privileged(cli.db).url;
    // No privilege at all on it: MariaDB's information_schema then does not
    // list the table, which once read as "no pauses table, nothing paused".
    sqlock_test::exec_sql(cli.db, "REVOKE SELECT, INSERT, UPDATE, DELETE ON " + cli.db.table +
                                      "_pauses FROM sqlock_noaccess");
    const std::string witness = make_dir() + "/ran";
    Result run = cli.bare({"run", "nightly", "--table", cli.db.table, "--", "touch", witness},
                          {{"SQLOCK_DB", url}});
    INFO(run.err);
    CHECK(run.code == 78);
    CHECK(run.err_lines() == 1);
    CHECK_FALSE(exists(witness));
    Result doctor = cli.bare({"doctor", "--table", cli.db.table}, {{"SQLOCK_DB", url}});
    INFO(doctor.err);
    CHECK(doctor.code == 78);
    CHECK_THAT(fact(doctor.out, "pauses table " + cli.db.table + "_pauses"),
               Contains("lacks privileges"));
}
