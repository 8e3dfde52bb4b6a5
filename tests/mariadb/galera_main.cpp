// Catch2 main of the Galera suite: it runs against the cluster of the ctest
// fixture `galera` (galera_cluster.sh wrote its URL to
// $SQLOCK_TEST_GALERA_DIR/url), and is skipped without one, unless
// SQLOCK_TEST_REQUIRE_MARIADB=1 (the whole run), where that is a failure.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "catch_session.hpp"
#include "test_support.hpp"

int main(int argc, char* argv[]) {
    const char* dir = std::getenv("SQLOCK_TEST_GALERA_DIR");
    std::string url;
    if (dir) {
        std::ifstream in(std::string(dir) + "/url");
        std::getline(in, url);
    }
    sqlock_test::SessionSetup setup;
    if (url.empty()) {
        const char* require = std::getenv("SQLOCK_TEST_REQUIRE_MARIADB");
        if (require && std::string(require) == "1") {
            std::fprintf(stderr,
                         "no Galera cluster (no URL in $SQLOCK_TEST_GALERA_DIR/url) but "
                         "SQLOCK_TEST_REQUIRE_MARIADB=1\n");
            return 1;
        }
        setup.skip_all = "no Galera cluster (the ctest fixture galera started none)";
    }
    return sqlock_test::run_catch_session(argc, argv, setup);
}
