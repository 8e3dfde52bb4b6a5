// The tests that test_reports_test.cpp runs in a program of their own, one
// group at a time, to see what the test programs' main reports: a test
// that asserts nothing, tests whose needs are missing, a need the run
// requires, a tag naming no need, a helper called without its tag. Not a
// ctest entry: each group is meant to fail or be left out.
#include <catch2/catch.hpp>

#include "test_support.hpp"

namespace {

const sqlock_test::DeclareNeed never_met{
    {"probe-never-met", [] { return std::string("the probe's need is never met"); }, nullptr}};
const sqlock_test::DeclareNeed required{
    {"probe-required", [] { return std::string("the probe's required need is missing"); },
     [] { return true; }}};

}  // namespace

TEST_CASE("probe: a test that asserts nothing", "[nothing]") {}

TEST_CASE("probe: a section that asserts nothing", "[nothing-section]") {
    SECTION("checks") {
        CHECK(sqlock_test::backend() != "");
    }
    SECTION("checks nothing") {}
}

TEST_CASE("probe: applies everywhere", "[backend][pool]") {
    CHECK(sqlock_test::backend() != "");
}

TEST_CASE("probe: needs a server", "[backend][needs:server]") {
    CHECK(sqlock_test::is_server_backend());
}

TEST_CASE("probe: needs an embedded database", "[backend][needs:embedded]") {
    CHECK_FALSE(sqlock_test::is_server_backend());
}

TEST_CASE("probe: needs transactions", "[pool][needs:transactions]") {
    CHECK(sqlock_test::backend() != "");
}

TEST_CASE("probe: needs sessions", "[pool][needs:sessions]") {
    CHECK(sqlock_test::backend() != "");
}

TEST_CASE("probe: needs what is never there", "[never][needs:probe-never-met]") {
    FAIL("ran although its need is missing");
}

TEST_CASE("probe: needs what the run requires", "[required][needs:probe-required]") {
    FAIL("ran although its need is missing");
}

// Hidden: it fails every run that selects it, a listing too.
TEST_CASE("probe: needs what the run requires, where it does not apply",
          "[required-elsewhere][needs:probe-required][needs:probe-never-met]") {
    FAIL("ran although its needs are missing");
}

TEST_CASE("probe: names a need nobody declared", "[.unknown][needs:probe-no-such-need]") {
    FAIL("ran although its need is unknown");
}

TEST_CASE("probe: only_on_server_backend without its tag", "[old-style]") {
    if (!sqlock_test::only_on_server_backend("the probe's reason")) return;
    CHECK(sqlock_test::is_server_backend());
}
