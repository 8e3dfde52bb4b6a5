// The message builder under every backend's error table
// (src/base/error_table.hpp) and the doctor's clock report
// (src/contract/clock_report.hpp): the words a pattern names are filled in
// one pass, a row is found by its code and tag, and the clock's fact and
// problem read the same for every backend.
#include <catch2/catch.hpp>
#include <string>

#include "base/error_table.hpp"
#include "contract/clock_report.hpp"

using sqlock::errc;
using sqlock::detail::ClockDifference;
using sqlock::detail::ErrorRow;
using sqlock::detail::MessageWords;

TEST_CASE("a pattern's words are filled in one pass, unknown ones kept", "[unit][errors]") {
    const MessageWords words{{"table", "lock table t"}, {"message", "no {table} here"}};
    CHECK(words.fill("{table} does not exist ({message})") ==
          "lock table t does not exist (no {table} here)");
    CHECK(words.fill("{other} and {table") == "{other} and {table");
    CHECK(words.fill("") == "");
}

TEST_CASE("an error row is found by its code, a tagged one only with its tag", "[unit][errors]") {
    const ErrorRow rows[] = {
        {1146, "fencing", errc::configuration, "the register"},
        {1146, nullptr, errc::configuration, "the table"},
        {1205, nullptr, errc::busy, "busy", false},
        {1290, nullptr, errc::configuration, "read-only", true},
    };
    CHECK(std::string(sqlock::detail::find_error_row(rows, 1146)->message) == "the table");
    CHECK(std::string(sqlock::detail::find_error_row(rows, 1146, "fencing")->message) ==
          "the register");
    CHECK(std::string(sqlock::detail::find_error_row(rows, 1146, "other")->message) == "the table");
    CHECK(sqlock::detail::find_error_row(rows, 9999) == nullptr);
    const sqlock::error busy = sqlock::detail::error_of_row(rows[2], "m", "1205/HY000");
    CHECK(busy.category() == errc::busy);
    CHECK_FALSE(busy.read_only());
    CHECK(busy.backend_code() == "1205/HY000");
    const sqlock::error read_only = sqlock::detail::error_of_row(rows[3], "m", "1290/HY000");
    CHECK(read_only.category() == errc::configuration);
    CHECK(read_only.read_only());
}

TEST_CASE("the clock's fact and problem say the difference the same on every backend",
          "[unit][doctor]") {
    const ClockDifference close{12.34, 0.46};
    const auto fact = sqlock::detail::clock_fact(close);
    CHECK(fact.key == "clock difference");
    CHECK(fact.value == "+12.3 ms (database minus this host, +/- 0.5 ms)");
    CHECK(sqlock::detail::clock_problem(close).empty());
    CHECK(sqlock::detail::clock_fact({-3.0, 0.1}).value ==
          "-3.0 ms (database minus this host, +/- 0.1 ms)");
    CHECK(sqlock::detail::clock_problem({2500.0, 0.1}) ==
          "this host's clock is 2.5 s behind the database's: leases are timed by the database, "
          "but times this host logs will not match; check NTP");
    CHECK(sqlock::detail::clock_problem({-3000.0, 0.1})
              .rfind("this host's clock is 3.0 s ahead of the database's", 0) == 0);
}

TEST_CASE("a clock window takes the database's reading at its midpoint", "[unit][doctor]") {
    sqlock::detail::ClockWindow window;
    const double now_s =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    window.answered();
    const ClockDifference d = window.against(now_s);
    CHECK(d.uncertainty_ms >= 0);
    CHECK(std::abs(d.difference_ms) <= d.uncertainty_ms + 1.0);
    CHECK(window.against(now_s + 10.0).difference_ms == Approx(d.difference_ms + 10000.0));
}
