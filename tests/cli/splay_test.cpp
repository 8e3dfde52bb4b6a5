// `sqlock run --splay DUR`: a random wait in [0, DUR) before asking for
// the lock, spread across processes; a signal during it ends the run with
// nothing taken and nothing run.
#include <signal.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using sqlock_test::eventually;

namespace {

// The "splay" event of a run's JSON log.
nlohmann::json splay_event_of(const std::string& err) {
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
        const auto e = nlohmann::json::parse(line);
        if (e["event"] == "splay") return e;
    }
    FAIL("no splay event in " << err);
    return nullptr;
}

}  // namespace

TEST_CASE("run --splay: runs start spread within DUR", "[cli][splay]") {
    Cli cli = fresh_cli();
    const std::string dir = make_dir();
    constexpr int runs = 8;
    std::vector<Process> started;
    const auto before = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i)
        started.push_back(cli.start(
            run_args("job-" + std::to_string(i), {"--splay", "2s", "--log-format", "json"},
                     {"sh", "-c", "echo ran >> \"$1\"", "sh", dir + "/witness"})));
    std::set<double> delays;
    for (Process& p : started) {
        Result r = p.wait();
        INFO(r.err);
        CHECK(r.code == 0);
        const auto e = splay_event_of(r.err);
        const double delay = e["delay_seconds"];
        CHECK(delay >= 0.0);
        CHECK(delay < 2.0);
        CHECK(e["splay_seconds"] == 2.0);
        delays.insert(delay);
    }
    CHECK(count_lines(dir + "/witness") == runs);
    // Eight draws from 2000 milliseconds: all equal only if it is not random.
    CHECK(delays.size() > 1);
    // Each waited its delay: the longest bounds the whole.
    CHECK(std::chrono::steady_clock::now() - before >=
          std::chrono::milliseconds(static_cast<long>(*delays.rbegin() * 1000)));

    // --verbose says how long in words.
    Result v = cli(run_args("job", {"--splay", "10ms", "--verbose"}, {"true"}));
    CHECK(v.code == 0);
    CHECK_THAT(v.err, Contains("(--splay 10ms) before asking for 'job'"));
}

TEST_CASE("run --splay: SIGTERM during the wait ends it at once, nothing taken", "[cli][splay]") {
    Cli cli = fresh_cli();
    const std::string witness = make_dir() + "/witness";
    Process p = cli.start(
        run_args("job", {"--splay", "1h", "--verbose"}, {"sh", "-c", "echo ran >> " + witness}));
    REQUIRE(eventually([&] { return p.err().find("--splay 1h") != std::string::npos; }));
    const auto start = std::chrono::steady_clock::now();
    p.signal(SIGTERM);
    Result r = p.wait();
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    CHECK(r.code == 143);
    CHECK_THAT(r.err,
               Contains("interrupted by SIGTERM during --splay; lock 'job' was not asked for"));
    CHECK_FALSE(exists(witness));
    CHECK(cli({"show", "job"}).code == 1);
    Result history = cli({"history", "job", "--json"});
    CHECK(history.code == 0);
    CHECK(nlohmann::json::parse(history.out).empty());
}
