#include "common/local_windows.hpp"

#include <date/tz.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "common/exit_codes.hpp"
#include "sqlock/duration.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

using std::chrono::milliseconds;
using ms_sys = date::sys_time<milliseconds>;
using ms_local = date::local_time<milliseconds>;
constexpr milliseconds one_day = std::chrono::hours(24);

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// The instant of local time `t`: the change itself for a time a DST gap
// skips, the first of the two for a time an overlap repeats.
std::int64_t instant(const date::time_zone* zone, ms_local t) {
    return zone->to_sys(t, date::choose::earliest).time_since_epoch().count();
}

}  // namespace

const date::time_zone* time_zone_option(const std::string& name, const std::string& source) {
    if (name.empty()) throw usage_error(source + " needs a time zone name, such as Europe/Berlin");
    try {
        return date::locate_zone(name);
    } catch (const std::exception&) {
        throw usage_error(source + ": unknown time zone " + "'" + sqlock::text::printable(name) +
                          "'" +
                          "; use an IANA name such as Europe/Berlin or America/New_York "
                          "(see /usr/share/zoneinfo)");
    }
}

const date::time_zone* zone_setting(bool given, const std::string& value) {
    if (given) return time_zone_option(value, "--tz");
    const char* env = std::getenv("SQLOCK_TZ");
    if (env && *env) return time_zone_option(env, "SQLOCK_TZ");
    return nullptr;
}

void check_local_window(milliseconds length) {
    if (length.count() > 0 &&
        (length % one_day == milliseconds::zero() || one_day % length == milliseconds::zero()))
        return;
    throw usage_error("--once-per " + sqlock::format_duration(length) +
                      " cannot be aligned on local midnight with --tz: use whole days, or a "
                      "length that divides a day (such as 1h, 15m or 6h)");
}

std::pair<std::int64_t, std::int64_t> local_window(const date::time_zone* zone, milliseconds length,
                                                   milliseconds offset, std::int64_t now_ms) {
    const ms_sys now{milliseconds(now_ms)};
    const ms_local local = zone->to_local(now);
    if (length % one_day == milliseconds::zero()) {
        // Calendar days, counted in the zone's own dates.
        const std::int64_t n = length / one_day;
        const auto shifted = date::floor<date::days>(local - offset);
        std::int64_t first = floor_div(shifted.time_since_epoch().count(), n) * n;
        auto start_of = [&](std::int64_t day) {
            return instant(zone, ms_local(date::days(day)) + offset);
        };
        // A start in a gap moves to the change, which may lie after now; one
        // in an overlap is its first, which may lie before a local time
        // that reads earlier (02:10 after 02:30, the clock set back).
        if (start_of(first) > now_ms) first -= n;
        if (start_of(first + n) <= now_ms) first += n;
        return {start_of(first), start_of(first + n)};
    }
    // Shorter windows: real time from the day's start.
    auto day_start = [&](std::int64_t day) {
        return instant(zone, ms_local(date::days(day)) + offset);
    };
    std::int64_t day = date::floor<date::days>(local - offset).time_since_epoch().count();
    if (day_start(day) > now_ms) --day;
    if (day_start(day + 1) <= now_ms) ++day;
    const std::int64_t anchor = day_start(day), next = day_start(day + 1);
    const std::int64_t start = anchor + (now_ms - anchor) / length.count() * length.count();
    return {start, std::min(start + length.count(), next)};
}

std::string local_text(const date::time_zone* zone, const std::string& utc) {
    // "YYYY-MM-DD HH:MM:SS", the databases' text, read by hand: date::parse
    // brings a maybe-uninitialized warning from its own code.
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (utc.size() < 19 ||
        std::sscanf(utc.c_str(), "%4d-%2d-%2d %2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6)
        return utc;
    const date::year_month_day day{date::year(y), date::month(static_cast<unsigned>(mo)),
                                   date::day(static_cast<unsigned>(d))};
    if (!day.ok()) return utc;
    const date::sys_seconds t = date::sys_days(day) + std::chrono::hours(h) +
                                std::chrono::minutes(mi) + std::chrono::seconds(sec);
    return date::format("%F %T %Z", date::make_zoned(zone, t));
}

}  // namespace sqlock_cli
