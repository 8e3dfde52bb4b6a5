// Running Catch2 from a test program's main. Catch2's implementation is
// compiled once, in catch_impl.cpp, for every test program (each copy costs
// half a minute of compiler time, more under the sanitizers); Catch::Session
// is declared only there, so a main of its own calls this instead.
#pragma once

namespace sqlock_test {

/// Runs the tests the command line selects (Catch::Session().run): returns
/// the number of failed assertions, capped as Catch2 caps it.
int run_catch_session(int argc, char* argv[]);

}  // namespace sqlock_test
