// What a test needs in order to apply, and how a test program says which
// tests it did not run.
//
// A test that cannot apply everywhere declares what it needs as a tag,
// [needs:NAME], one tag per need:
//
//   TEST_CASE("a URL's password never shows", "[security][needs:server]") { ... }
//
// The test program's main (catch_session.hpp) evaluates each need of the
// tests the command line selects before any test runs. A test whose need is
// missing is taken out of the run, as if it had not been registered, and
// the program prints one line for it:
//
//   SQLOCK_TEST_NOT_RUN: <test name>: <reason>
//
// and, at the end, one line that counts every test of the run:
//
//   SQLOCK_TEST_CASES: N passed, N failed, N skipped
//
// which tests/run-all.sh adds up (a skipped test is never counted as
// passed). When no selected test remains, the program prints ctest's skip
// line (SQLOCK_TEST_SKIPPED:) and the ctest entry is reported as skipped.
// A need the set-up should have met (Need::required: a tool CI installs, a
// server script CI provides) fails the test instead of skipping it, unless
// another need of the test is missing that no set-up can meet (a server
// backend's need on an embedded one): the test does not apply there.
//
// The needs every backend suite can name (backend_needs.hpp: server,
// embedded, transactions, the test context's hooks, ...) come with the
// backend main; a test file declares a need of its own with a DeclareNeed
// object. A tag naming a need nobody declared fails the program, so a typo
// never skips a test in silence.
//
// Thread safety: needs are declared during static initialisation and read
// by main before any test runs.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace sqlock_test {

/// Need
///
/// One condition that some tests need, named as in their tag [needs:NAME]
/// (lower case: Catch2 compares tags without case).
struct Need {
    /// The tag's NAME.
    std::string name;
    /// What is missing: "" when the need is met, else a reason for the
    /// report ("sqlite is an embedded database"). Called at most once per
    /// program, and only if a selected test names the need.
    std::function<std::string()> missing;
    /// True when a missing need is a broken set-up rather than a test that
    /// does not apply: the test then fails, naming the reason, instead of
    /// being skipped. Null: never (a need of the backend or the path to it,
    /// which no set-up can meet).
    std::function<bool()> required;
};

/// DeclareNeed
///
/// Declares a need for the tests of this program, as a static object in the
/// test file whose tests name it:
///
///   const sqlock_test::DeclareNeed prometheus_client{{
///       "prometheus-client",
///       [] { return python_module_missing(); },
///       [] { return sqlock_test::require_all(); }}};
struct DeclareNeed {
    explicit DeclareNeed(Need need);
};

/// The needs declared by DeclareNeed objects, in the order of declaration.
const std::vector<Need>& declared_needs();

/// The tag that declares `need`: "[needs:NAME]".
std::string need_tag(const std::string& need);

/// True while a test runs that carries the tag [needs:NAME] for `need`.
bool current_test_declares(const std::string& need);

/// True when $SQLOCK_TEST_REQUIRE_ALL is 1 (tests/run-all.sh, hence CI):
/// every optional tool must be there.
bool require_all();

}  // namespace sqlock_test
