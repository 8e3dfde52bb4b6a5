// Catch2's implementation, compiled once for every test program
// (catch_session.hpp says why), and the session every main runs: tests
// whose needs are missing taken out of the run and reported (needs.hpp),
// -w NoAssertions, and the count line.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catch_session.hpp"

namespace {

// The test cases the run passed and failed, from Catch2's own totals.
struct RunCounts {
    std::size_t passed = 0;
    std::size_t failed = 0;
    bool ended = false;
};
RunCounts run_counts;

// Catch2 reports the end of the run to every listener.
struct CountingListener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    void testRunEnded(const Catch::TestRunStats& stats) override {
        // A test that may fail ([!mayfail]) and did is not a failure.
        run_counts.passed = stats.totals.testCases.passed + stats.totals.testCases.failedButOk;
        run_counts.failed = stats.totals.testCases.failed;
        run_counts.ended = true;
    }
};

// A test case left out of the run, and why.
struct NotRun {
    std::string test;
    std::string reason;
    bool failed;  // a required need: counted as failed, not skipped
};

const std::string needs_prefix = "needs:";

// The needs a test's tags name, lower case, in tag order.
std::vector<std::string> needs_of(const Catch::TestCaseInfo& test) {
    std::vector<std::string> out;
    for (const std::string& tag : test.lcaseTags)
        if (tag.rfind(needs_prefix, 0) == 0) out.push_back(tag.substr(needs_prefix.size()));
    return out;
}

// The needs of this run by name, each evaluated once, on first use.
class NeedTable {
  public:
    explicit NeedTable(const std::vector<sqlock_test::Need>& needs) {
        for (const sqlock_test::Need& need : needs) needs_.emplace(need.name, need);
    }
    bool known(const std::string& name) const { return needs_.count(name) > 0; }
    // "" when met, else the reason.
    const std::string& missing(const std::string& name) {
        auto cached = missing_.find(name);
        if (cached != missing_.end()) return cached->second;
        const sqlock_test::Need& need = needs_.at(name);
        return missing_[name] = need.missing ? need.missing() : std::string();
    }
    bool required(const std::string& name) const {
        const sqlock_test::Need& need = needs_.at(name);
        return need.required && need.required();
    }

  private:
    std::map<std::string, sqlock_test::Need> needs_;
    std::map<std::string, std::string> missing_;
};

// Whether the command line's test spec selects `test`, as Catch2's own run
// does (catch_session.cpp's TestGroup): every test not hidden when there
// are no filters, else those a filter matches.
bool selected(const Catch::TestCase& test, const Catch::Config& config) {
    if (!config.testSpec().hasFilters()) return !test.isHidden();
    return config.testSpec().matches(test);
}

bool listing(const Catch::ConfigData& data) {
    return data.listTests || data.listTestNamesOnly || data.listTags || data.listReporters;
}

void print_count(std::size_t passed, std::size_t failed, std::size_t skipped) {
    std::cout << "SQLOCK_TEST_CASES: " << passed << " passed, " << failed << " failed, " << skipped
              << " skipped" << std::endl;
}

}  // namespace

CATCH_REGISTER_LISTENER(CountingListener)

int sqlock_test::run_catch_session(int argc, char* argv[], const SessionSetup& setup) {
    Catch::Session session;
    if (const int bad = session.applyCommandLine(argc, argv)) return bad;
    Catch::ConfigData& data = session.configData();
    if (data.showHelp || data.libIdentify) return session.run();
    // A test (or a section without sections of its own) that asserts
    // nothing has checked nothing: it fails.
    data.warnings =
        static_cast<Catch::WarnAbout::What>(data.warnings | Catch::WarnAbout::NoAssertions);

    Catch::Config& config = session.config();
    // The tags `-#` adds are matched by the spec: add them before selecting,
    // as the run does (it adds them again, which changes nothing).
    if (data.filenamesAsTags) Catch::applyFilenamesAsTags(config);

    std::vector<sqlock_test::Need> needs = declared_needs();
    needs.insert(needs.end(), setup.needs.begin(), setup.needs.end());
    NeedTable table(needs);

    // The sorted list is the one the run and the listings read (Catch2's
    // applyFilenamesAsTags changes it in place the same way): a test erased
    // from it is not registered for this run.
    auto& tests = const_cast<std::vector<Catch::TestCase>&>(Catch::getAllTestCasesSorted(config));
    std::vector<NotRun> not_run;
    std::vector<std::string> unknown;
    std::size_t selected_count = 0;
    auto unmet = [&](const Catch::TestCase& test) -> bool {
        if (!selected(test, config)) return false;
        ++selected_count;
        if (!setup.skip_all.empty()) {
            not_run.push_back({test.name, setup.skip_all, false});
            return true;
        }
        // Every need it lacks, in the order Catch2 keeps its tags (sorted).
        // It fails only when each is one the set-up should have met: one
        // missing need that no set-up can meet means it does not apply.
        std::string reasons;
        bool applies = true;
        for (const std::string& need : needs_of(test)) {
            if (!table.known(need)) {
                unknown.push_back("\"" + test.name + "\" " + need_tag(need) + " (" +
                                  test.lineInfo.file + ":" + std::to_string(test.lineInfo.line) +
                                  ")");
                return true;
            }
            const std::string& why = table.missing(need);
            if (why.empty()) continue;
            const bool required = table.required(need);
            applies = applies && required;
            reasons += (reasons.empty() ? "" : "; ") + need_tag(need) + ": " + why +
                       (required ? " (required here)" : "");
        }
        if (reasons.empty()) return false;
        not_run.push_back({test.name, reasons, applies});
        return true;
    };
    tests.erase(std::remove_if(tests.begin(), tests.end(), unmet), tests.end());

    if (!unknown.empty()) {
        for (const std::string& u : unknown)
            std::cerr << "test names a need nobody declared: " << u
                      << " (needs.hpp; backend_needs.hpp lists the backend's)\n";
        return 1;
    }
    if (listing(data)) return session.run();

    std::size_t skipped = 0, failed_needs = 0;
    for (const NotRun& n : not_run) {
        std::cout << (n.failed ? "SQLOCK_TEST_FAILED_NEED: " : "SQLOCK_TEST_NOT_RUN: ") << n.test
                  << ": " << n.reason << "\n";
        ++(n.failed ? failed_needs : skipped);
    }
    std::cout << std::flush;

    // Nothing left to run of what was selected (but something was): the
    // program did not run, and says so as ctest recognises it.
    if (selected_count > 0 && not_run.size() == selected_count) {
        if (failed_needs == 0) {
            std::cout << "SQLOCK_TEST_SKIPPED: "
                      << (setup.skip_all.empty() ? "no test of this run applies here"
                                                 : setup.skip_all)
                      << std::endl;
        }
        print_count(0, failed_needs, skipped);
        return failed_needs > 0 ? 1 : 0;
    }

    const int code = session.run();
    print_count(run_counts.passed, run_counts.failed + failed_needs, skipped);
    if (failed_needs > 0 && code == 0) return 1;
    return code;
}
