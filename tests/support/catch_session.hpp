// Running Catch2 from a test program's main. Catch2's implementation is
// compiled once, in catch_impl.cpp, for every test program (each copy costs
// half a minute of compiler time, more under the sanitizers); Catch::Session
// is declared only there, so a main of its own calls this instead.
#pragma once

#include <string>
#include <vector>

#include "needs.hpp"

namespace sqlock_test {

/// What a program's main adds to its tests' run.
struct SessionSetup {
    /// Needs beyond the declared ones (declared_needs()): the backend
    /// main's (backend_needs()).
    std::vector<Need> needs;
    /// Not empty: none of the tests can run here, for this reason (no server
    /// to test against). Each selected test is reported as not run, and the
    /// program as skipped.
    std::string skip_all;
};

/// Runs the tests the command line selects (Catch::Session().run), always
/// with -w NoAssertions: a test case or section that asserts nothing fails.
/// Tests whose needs are missing (needs.hpp) are left out of the run, each
/// reported on a line of its own, and every run ends with the count line
/// SQLOCK_TEST_CASES. Returns what main returns: 0, or the number of failed
/// assertions capped as Catch2 caps it (at least 1 when a required need was
/// missing or a tag names an unknown need).
int run_catch_session(int argc, char* argv[], const SessionSetup& setup = {});

}  // namespace sqlock_test
