// Catch2's implementation, compiled once for every test program
// (catch_session.hpp says why).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_session.hpp"

int sqlock_test::run_catch_session(int argc, char* argv[]) {
    return Catch::Session().run(argc, argv);
}
