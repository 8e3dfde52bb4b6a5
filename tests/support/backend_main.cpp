// Catch2 main for suites that run against one backend chosen at run time.
// With a server backend (SQLOCK_TEST_BACKEND=postgres or mariadb) and no
// server configured, the suite is skipped (sqlock_test::skip_suite; ctest
// shows it as skipped, never as passed) — unless the backend's require
// variable is 1 (SQLOCK_TEST_REQUIRE_PG, SQLOCK_TEST_REQUIRE_MARIADB: CI),
// where a missing server is a failure. sqlock_test::server_env() names the
// variables of each backend.
//
// The PostgreSQL suites also run through PgBouncer (tests/pgbouncer.sh) as
// extra ctest entries that set SQLOCK_TEST_PG_URL_FROM to the name of the
// variable holding the pooled URL (SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL,
// ...): that URL replaces SQLOCK_TEST_PG_URL for this process and the
// programs it runs, and SQLOCK_TEST_REQUIRE_PGBOUNCER=1 makes a missing one a
// failure.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "test_support.hpp"

int main(int argc, char* argv[]) {
    if (sqlock_test::is_server_backend()) {
        const auto server = sqlock_test::server_env();
        const char* from =
            sqlock_test::backend() == "postgres" ? std::getenv("SQLOCK_TEST_PG_URL_FROM") : nullptr;
        const std::string url_var = from && *from ? from : server.url_variable;
        const std::string require_var =
            from && *from ? "SQLOCK_TEST_REQUIRE_PGBOUNCER" : server.require_variable;
        const char* url = std::getenv(url_var.c_str());
        const char* require = std::getenv(require_var.c_str());
        if (!url || !*url) {
            if (require && std::string(require) == "1") {
                std::fprintf(stderr, "%s is not set but %s=1\n", url_var.c_str(),
                             require_var.c_str());
                return 1;
            }
            return sqlock_test::skip_suite("no " + server.server_name + " server (set " + url_var +
                                           ")");
        }
        // Before any thread exists: setenv is not thread-safe.
        if (url_var != server.url_variable) setenv(server.url_variable.c_str(), url, 1);
    }
    return Catch::Session().run(argc, argv);
}
