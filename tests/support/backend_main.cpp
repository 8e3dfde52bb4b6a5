// Catch2 main for suites that run against one backend chosen at run time.
// With a server backend (SQLOCK_TEST_BACKEND=postgres or mariadb: one with a
// testing/server.sh) and no server configured, the suite is skipped (each
// test it selects reported as not run, and ctest shows the entry as
// skipped, never as passed) — unless the backend's require variable is 1
// (SQLOCK_TEST_REQUIRE_PG, SQLOCK_TEST_REQUIRE_MARIADB: CI), where a missing
// server is a failure. sqlock_test::backend_context() names the variables of
// each backend.
//
// A test that cannot apply to every backend or path declares what it needs
// as a tag, [needs:NAME] (needs.hpp); the needs judged here are the
// backend's (backend_needs.hpp). Where one is missing, the test is not run
// and is reported as skipped, with the reason.
//
// A ctest entry may point a suite at another URL of the same backend by
// naming the variable that holds it in <URL variable>_FROM, and the variable
// that makes its absence a failure in <require variable>_FROM: the PostgreSQL
// suites' runs through PgBouncer (tests/CMakeLists.txt, add_pooled_suite) set
// SQLOCK_TEST_PG_URL_FROM=SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL, ... and
// SQLOCK_TEST_REQUIRE_PG_FROM=SQLOCK_TEST_REQUIRE_PGBOUNCER. That URL replaces
// the backend's for this process and the programs it runs. Or, in
// <URL variable>_FILE, the file a server started by a ctest fixture wrote
// its URL to (MariaDB's run against a node of the Galera suites' cluster,
// tests/mariadb/): a file that is missing or empty is no server.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backend_needs.hpp"
#include "catch_session.hpp"
#include "test_support.hpp"

namespace {

std::string env(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    return value ? value : "";
}

}  // namespace

int main(int argc, char* argv[]) {
    sqlock_test::SessionSetup setup;
    if (sqlock_test::is_server_backend()) {
        const auto& server = sqlock_test::backend_context();
        const std::string from = env(server.url_variable + "_FROM");
        const std::string url_var = from.empty() ? server.url_variable : from;
        const std::string require_from = env(server.require_variable + "_FROM");
        const std::string require_var =
            from.empty() || require_from.empty() ? server.require_variable : require_from;
        const std::string file = env(server.url_variable + "_FILE");
        std::string url = env(url_var);
        if (!file.empty()) {
            std::ifstream in(file);
            std::getline(in, url);
        }
        if (url.empty()) {
            if (env(require_var) == "1") {
                std::fprintf(stderr, "%s is not set but %s=1\n",
                             file.empty() ? url_var.c_str() : file.c_str(), require_var.c_str());
                return 1;
            }
            setup.skip_all = "no " + server.title + " server (" +
                             (file.empty() ? "set " + url_var : "no URL in " + file) + ")";
        } else if (url_var != server.url_variable || !file.empty()) {
            // Before any thread exists: setenv is not thread-safe.
            setenv(server.url_variable.c_str(), url.c_str(), 1);
        }
    }
    setup.needs = sqlock_test::backend_needs();
    return sqlock_test::run_catch_session(argc, argv, setup);
}
