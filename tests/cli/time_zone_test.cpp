// `sqlock run --once-per DUR --tz ZONE` (and SQLOCK_TZ): windows aligned on
// local midnight in an IANA zone, judged by the database's clock. On every
// backend against the server's real clock; on SQLite, whose clock is the
// process's, across both DST changes of a year with a faked clock
// (libfaketime). The window arithmetic itself is unit-tested
// (tests/unit/local_windows_test.cpp).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

using namespace cli_test;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;

namespace {

// A job that appends its $SQLOCK_WINDOW_START to `file`.
args_t window_start_writer(const std::string& file) {
    return {"sh", "-c", "echo \"$SQLOCK_WINDOW_START\" >> \"$1\"", "sh", file};
}

// The last line of a file, without its newline.
std::string last_line_of(const std::string& path) {
    std::string text = read_file(path);
    if (!text.empty() && text.back() == '\n') text.pop_back();
    return text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
}

}  // namespace

TEST_CASE("run --tz: a day window starts at local midnight by the database's clock",
          "[cli][once-per][tz]") {
    Cli cli = fresh_cli();
    const std::string file = make_dir() + "/windows";
    // India has no DST: its midnight is always 18:30 UTC.
    Result kolkata = cli(
        run_args("in", {"--once-per", "1d", "--tz", "Asia/Kolkata"}, window_start_writer(file)));
    INFO(kolkata.err);
    REQUIRE(kolkata.code == 0);
    CHECK_THAT(last_line_of(file), EndsWith(" 18:30:00.000"));
    // SQLOCK_TZ says the same; --tz wins over it.
    Result env = cli(run_args("utc", {"--once-per", "1d"}, window_start_writer(file)),
                     {{"SQLOCK_TZ", "UTC"}});
    REQUIRE(env.code == 0);
    CHECK_THAT(last_line_of(file), EndsWith(" 00:00:00.000"));
    Result over = cli(
        run_args("np", {"--once-per", "1d", "--tz", "Asia/Kathmandu"}, window_start_writer(file)),
        {{"SQLOCK_TZ", "UTC"}});
    REQUIRE(over.code == 0);
    CHECK_THAT(last_line_of(file), EndsWith(" 18:15:00.000"));  // UTC+5:45
    // The second run in the window does not run.
    Result again = cli(run_args("in", {"--once-per", "1d", "--tz", "Asia/Kolkata", "--verbose"},
                                window_start_writer(file)));
    CHECK(again.code == 0);
    CHECK_THAT(again.err, Contains("is done") && Contains("IST to "));
    CHECK(count_lines(file) == 3);
    // An unknown SQLOCK_TZ is a usage error like --tz's; unused, it is not read.
    Result bad = cli(run_args("in", {"--once-per", "1d"}, window_start_writer(file)),
                     {{"SQLOCK_TZ", "Mars/Base"}});
    CHECK(bad.code == 64);
    CHECK_THAT(bad.err, Contains("SQLOCK_TZ: unknown time zone 'Mars/Base'"));
    CHECK(cli(run_args("plain", {}, {"true"}), {{"SQLOCK_TZ", "Mars/Base"}}).code == 0);
    CHECK(count_lines(file) == 3);

    // history and check show local times with --tz.
    Result history = cli({"history", "in", "--tz", "Asia/Kolkata"});
    CHECK(history.code == 0);
    CHECK_THAT(history.out, Contains("STARTED (Asia/Kolkata)") && Contains(" IST "));
    Result json = cli({"history", "in", "--json", "--tz", "Asia/Kolkata"});
    CHECK_THAT(nlohmann::json::parse(json.out)[0]["started_local"].get<std::string>(),
               EndsWith(" IST"));
    Result check = cli({"check", "in", "--max-age", "1h", "--tz", "Asia/Kolkata"});
    CHECK(check.code == 0);
    CHECK_THAT(check.out, Contains("last success") && Contains(" IST ("));
}

TEST_CASE("run --tz: windows across both DST changes of a year, with a faked clock",
          "[cli][once-per][tz][needs:embedded][needs:libfaketime]") {
    // Only an embedded database's clock is this process's: libfaketime moves
    // the database's "now" with sqlock's. The servers' clocks are their own.
    const std::string faketime = sqlock_test::libfaketime_path();
    Cli cli = fresh_cli();
    const std::string file = make_dir() + "/windows";
    // One run at `utc` (the clock then runs on from there), in Berlin days.
    auto run_at = [&](const std::string& utc) {
        return cli(run_args("nightly", {"--once-per", "1d", "--tz", "Europe/Berlin"},
                            window_start_writer(file)),
                   {{"LD_PRELOAD", faketime},
                    {"FAKETIME", "@" + utc},
                    {"TZ", "UTC"},
                    {"FAKETIME_DONT_FAKE_MONOTONIC", "1"},
                    {"FAKETIME_NO_CACHE", "1"}});
    };
    struct Step {
        const char* at;      // UTC
        const char* window;  // the window start it runs for, or "" when done
    };
    const Step steps[] = {
        // 29 March 2026, 23 hours: 00:00 CET (23:00 UTC the day before) to
        // 00:00 CEST (22:00 UTC).
        {"2026-03-28 23:30:00", "2026-03-28 23:00:00.000"},
        {"2026-03-29 21:30:00", ""},  // 23:30 CEST: the same day
        {"2026-03-29 22:10:00", "2026-03-29 22:00:00.000"},
        // 25 October 2026, 25 hours: 00:00 CEST (22:00 UTC the day before)
        // to 00:00 CET (23:00 UTC). A day later by UTC is still that day.
        {"2026-10-24 22:30:00", "2026-10-24 22:00:00.000"},
        {"2026-10-25 22:30:00", ""},
        {"2026-10-25 23:05:00", "2026-10-25 23:00:00.000"},
    };
    int ran = 0;
    for (const Step& step : steps) {
        CAPTURE(step.at);
        Result r = run_at(step.at);
        INFO(r.err);
        REQUIRE(r.code == 0);
        if (*step.window) {
            ++ran;
            REQUIRE(count_lines(file) == ran);
            CHECK(last_line_of(file) == step.window);
        } else {
            CHECK(count_lines(file) == ran);  // not run: its window was done
        }
    }
    CHECK(ran == 4);
}
