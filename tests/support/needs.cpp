#include "needs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace sqlock_test {
namespace {

// Filled during static initialisation: a function-local static is made on
// first use, whichever file's DeclareNeed comes first.
std::vector<Need>& registry() {
    static std::vector<Need> needs;
    return needs;
}

}  // namespace

DeclareNeed::DeclareNeed(Need need) {
    registry().push_back(std::move(need));
}

const std::vector<Need>& declared_needs() {
    return registry();
}

std::string need_tag(const std::string& need) {
    return "[needs:" + need + "]";
}

bool current_test_declares(const std::string& need) {
    const std::string name = Catch::getResultCapture().getCurrentTestName();
    const std::string tag = "needs:" + need;
    for (const Catch::TestCase& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests())
        if (test.name == name)
            return std::find(test.lcaseTags.begin(), test.lcaseTags.end(), tag) !=
                   test.lcaseTags.end();
    return false;
}

bool require_all() {
    const char* strict = std::getenv("SQLOCK_TEST_REQUIRE_ALL");
    return strict && std::string(strict) == "1";
}

}  // namespace sqlock_test
