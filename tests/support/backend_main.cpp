// Catch2 main for suites that run against one backend chosen at run time.
// With SQLOCK_TEST_BACKEND=postgres and no server configured, the suite is
// skipped (sqlock_test::skip_suite; ctest shows it as skipped, never as
// passed) — unless SQLOCK_TEST_REQUIRE_PG=1 (CI), where a missing server is a
// failure.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "test_support.hpp"

int main(int argc, char* argv[]) {
    if (sqlock_test::backend() == "postgres") {
        const char* url = std::getenv("SQLOCK_TEST_PG_URL");
        const char* require = std::getenv("SQLOCK_TEST_REQUIRE_PG");
        if (!url || !*url) {
            if (require && std::string(require) == "1") {
                std::fprintf(stderr,
                             "SQLOCK_TEST_PG_URL is not set but SQLOCK_TEST_REQUIRE_PG=1\n");
                return 1;
            }
            return sqlock_test::skip_suite("no PostgreSQL server (set SQLOCK_TEST_PG_URL)");
        }
    }
    return Catch::Session().run(argc, argv);
}
