// The main of CATCH_CONFIG_MAIN, for the test programs without one of their
// own.
#include "catch_session.hpp"

int main(int argc, char* argv[]) {
    return sqlock_test::run_catch_session(argc, argv);
}
