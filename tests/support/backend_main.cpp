// Catch2 main for suites that run against one backend chosen at run time.
// With SQLOCK_TEST_BACKEND=postgres and no server configured, the suite is
// skipped (sqlock_test::skip_suite; ctest shows it as skipped, never as
// passed) — unless SQLOCK_TEST_REQUIRE_PG=1 (CI), where a missing server is a
// failure.
//
// The same suite runs through PgBouncer (tests/pgbouncer.sh) as extra ctest
// entries that set SQLOCK_TEST_PG_URL_FROM to the name of the variable
// holding the pooled URL (SQLOCK_TEST_PGBOUNCER_TRANSACTION_URL, ...): that
// URL replaces SQLOCK_TEST_PG_URL for this process and the programs it runs,
// and SQLOCK_TEST_REQUIRE_PGBOUNCER=1 makes a missing one a failure.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "test_support.hpp"

int main(int argc, char* argv[]) {
    if (sqlock_test::backend() == "postgres") {
        const char* from = std::getenv("SQLOCK_TEST_PG_URL_FROM");
        const std::string url_var = from && *from ? from : "SQLOCK_TEST_PG_URL";
        const std::string require_var =
            from && *from ? "SQLOCK_TEST_REQUIRE_PGBOUNCER" : "SQLOCK_TEST_REQUIRE_PG";
        const char* url = std::getenv(url_var.c_str());
        const char* require = std::getenv(require_var.c_str());
        if (!url || !*url) {
            if (require && std::string(require) == "1") {
                std::fprintf(stderr, "%s is not set but %s=1\n", url_var.c_str(),
                             require_var.c_str());
                return 1;
            }
            return sqlock_test::skip_suite("no PostgreSQL server (set " + url_var + ")");
        }
        // Before any thread exists: setenv is not thread-safe.
        if (url_var != "SQLOCK_TEST_PG_URL") setenv("SQLOCK_TEST_PG_URL", url, 1);
    }
    return Catch::Session().run(argc, argv);
}
