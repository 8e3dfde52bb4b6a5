// Once-per windows in a time zone (tools/sqlock/common/local_windows.hpp) at given
// instants, across both DST changes of 2026 in Europe/Berlin (last Sunday
// of March: 02:00 CET becomes 03:00 CEST at 01:00 UTC; last Sunday of
// October: 03:00 CEST becomes 02:00 CET at 01:00 UTC) and in a zone south
// of the equator, whose changes fall the other way round.
#include <date/tz.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/local_windows.hpp"

using namespace std::chrono_literals;
using sqlock_cli::local_window;
using std::chrono::milliseconds;

namespace {

// Milliseconds since the epoch of "YYYY-MM-DD HH:MM:SS" UTC.
std::int64_t utc(const std::string& text) {
    std::istringstream in(text);
    date::sys_time<milliseconds> t;
    in >> date::parse("%F %T", t);
    REQUIRE_FALSE(in.fail());
    return t.time_since_epoch().count();
}

// The window as UTC text, "start / end", for readable failures.
std::string window_at(const char* zone, milliseconds length, milliseconds offset,
                      const std::string& now) {
    const auto [start, end] = local_window(date::locate_zone(zone), length, offset, utc(now));
    const auto text = [](std::int64_t ms) {
        return date::format("%F %T", date::floor<std::chrono::seconds>(
                                         date::sys_time<milliseconds>(milliseconds(ms))));
    };
    CHECK(start <= utc(now));
    CHECK(utc(now) < end);
    return text(start) + " / " + text(end);
}

}  // namespace

TEST_CASE("a day in a time zone is its local calendar day, 23 or 25 hours at DST") {
    // A winter day: 24 hours from 23:00 UTC.
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-01-15 12:00:00") ==
          "2026-01-14 23:00:00 / 2026-01-15 23:00:00");
    // Spring forward (29 March): 00:00 CET to 00:00 CEST, 23 hours.
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-03-29 00:59:59") ==
          "2026-03-28 23:00:00 / 2026-03-29 22:00:00");
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-03-29 21:59:59") ==
          "2026-03-28 23:00:00 / 2026-03-29 22:00:00");
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-03-29 22:00:00") ==
          "2026-03-29 22:00:00 / 2026-03-30 22:00:00");
    // Fall back (25 October): 00:00 CEST to 00:00 CET, 25 hours.
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-10-24 22:00:00") ==
          "2026-10-24 22:00:00 / 2026-10-25 23:00:00");
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-10-25 22:59:59") ==
          "2026-10-24 22:00:00 / 2026-10-25 23:00:00");
    CHECK(window_at("Europe/Berlin", 24h, 0ms, "2026-10-25 23:00:00") ==
          "2026-10-25 23:00:00 / 2026-10-26 23:00:00");
    // South of the equator: Sydney leaves DST on 5 April 2026 (03:00 AEDT
    // becomes 02:00 AEST: a 25-hour day) and enters it on 4 October (02:00
    // AEST becomes 03:00 AEDT: 23 hours).
    CHECK(window_at("Australia/Sydney", 24h, 0ms, "2026-04-05 06:00:00") ==
          "2026-04-04 13:00:00 / 2026-04-05 14:00:00");
    CHECK(window_at("Australia/Sydney", 24h, 0ms, "2026-10-04 06:00:00") ==
          "2026-10-03 14:00:00 / 2026-10-04 13:00:00");
}

TEST_CASE("an offset is local time of day; one in a DST gap starts at the change") {
    // Days from 03:00 local: the day of 29 March starts at 03:00 CEST.
    CHECK(window_at("Europe/Berlin", 24h, 3h, "2026-03-29 01:30:00") ==
          "2026-03-29 01:00:00 / 2026-03-30 01:00:00");
    CHECK(window_at("Europe/Berlin", 24h, 3h, "2026-03-29 00:30:00") ==
          "2026-03-28 02:00:00 / 2026-03-29 01:00:00");
    // 02:30 does not exist on 29 March: that day starts at the change,
    // 03:00 CEST (01:00 UTC).
    CHECK(window_at("Europe/Berlin", 24h, 2h + 30min, "2026-03-29 01:10:00") ==
          "2026-03-29 01:00:00 / 2026-03-30 00:30:00");
    // 02:30 happens twice on 25 October: the day starts at the first.
    CHECK(window_at("Europe/Berlin", 24h, 2h + 30min, "2026-10-25 01:10:00") ==
          "2026-10-25 00:30:00 / 2026-10-26 01:30:00");
}

TEST_CASE("windows of several days are counted in local dates") {
    // 7-day windows from 1970-01-01 local (a Thursday).
    CHECK(window_at("Europe/Berlin", 24h * 7, 0ms, "2026-03-29 12:00:00") ==
          "2026-03-25 23:00:00 / 2026-04-01 22:00:00");
}

TEST_CASE("shorter windows are real time from local midnight, the day's last one cut") {
    // An hour is an hour: the hour from 03:00 CEST on 29 March.
    CHECK(window_at("Europe/Berlin", 1h, 0ms, "2026-03-29 01:30:00") ==
          "2026-03-29 01:00:00 / 2026-03-29 02:00:00");
    // 02:30 CEST and 02:30 CET on 25 October are two windows.
    CHECK(window_at("Europe/Berlin", 1h, 0ms, "2026-10-25 00:30:00") ==
          "2026-10-25 00:00:00 / 2026-10-25 01:00:00");
    CHECK(window_at("Europe/Berlin", 1h, 0ms, "2026-10-25 01:30:00") ==
          "2026-10-25 01:00:00 / 2026-10-25 02:00:00");
    // 6 hours on the 25-hour day: 0, 6, 12, 18 and 24 hours after local
    // midnight, the last cut to the one hour left before the next.
    CHECK(window_at("Europe/Berlin", 6h, 0ms, "2026-10-25 22:30:00") ==
          "2026-10-25 22:00:00 / 2026-10-25 23:00:00");
    CHECK(window_at("Europe/Berlin", 6h, 0ms, "2026-10-25 17:00:00") ==
          "2026-10-25 16:00:00 / 2026-10-25 22:00:00");
    // On the 23-hour day the last window is 5 hours.
    CHECK(window_at("Europe/Berlin", 6h, 0ms, "2026-03-29 20:00:00") ==
          "2026-03-29 17:00:00 / 2026-03-29 22:00:00");
}

TEST_CASE("--tz: an unknown zone, and a window that cannot align on midnight, are usage errors") {
    CHECK_THROWS_AS(sqlock_cli::time_zone_option("Mars/Base", "--tz"), sqlock_cli::cli_error);
    try {
        sqlock_cli::time_zone_option("Mars/Base", "--tz");
    } catch (const sqlock_cli::cli_error& e) {
        CHECK(e.code() == 64);
        CHECK(std::string(e.what()).find("unknown time zone 'Mars/Base'") != std::string::npos);
    }
    CHECK(sqlock_cli::time_zone_option("Europe/Berlin", "--tz")->name() == "Europe/Berlin");
    CHECK_THROWS_AS(sqlock_cli::check_local_window(7h), sqlock_cli::cli_error);
    CHECK_THROWS_AS(sqlock_cli::check_local_window(36h), sqlock_cli::cli_error);
    CHECK_NOTHROW(sqlock_cli::check_local_window(15min));
    CHECK_NOTHROW(sqlock_cli::check_local_window(48h));
}
