// `run --once-per DUR --tz ZONE`: once-per windows in a time zone, aligned
// on its local midnight, from the IANA database the system keeps
// (/usr/share/zoneinfo, Debian's tzdata, read by Howard Hinnant's date/tz).
// Pure arithmetic on instants: the database's now goes in, the window
// comes out (RunHistory::once_per_window with a rule).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace date {
class time_zone;
}

namespace sqlock_cli {

/// The zone named `name` (e.g. "Europe/Berlin"). Throws usage_error (64)
/// naming `source` (--tz, SQLOCK_TZ) for a zone the database does not have.
const date::time_zone* time_zone_option(const std::string& name, const std::string& source);

/// The zone to show times in: --tz when `given` (its `value`), else
/// $SQLOCK_TZ when set and not empty, else null (UTC). Throws as
/// time_zone_option().
const date::time_zone* zone_setting(bool given, const std::string& value);

/// Throws usage_error unless windows of `length` can be aligned on local
/// midnight: whole days, or a length that divides a day (1h, 15m, 6h...).
void check_local_window(std::chrono::milliseconds length);

/// The window of `length`, shifted by `offset` (local time of day, or days
/// and time for a window of several days), that holds `now_ms` (ms since
/// the Unix epoch) in `zone`, as [start, end) in ms since the epoch:
/// - whole days: local calendar days from local midnight plus `offset`,
///   counted from 1970-01-01 local (a day is 23 or 25 hours at a DST change);
/// - shorter: from local midnight plus `offset`, `length` after `length` of
///   real time (an hour is an hour), the last one of a day cut at the next
///   day's start.
/// A start that falls in a DST gap begins at the change; one that falls
/// twice in a DST overlap begins at its first.
std::pair<std::int64_t, std::int64_t> local_window(const date::time_zone* zone,
                                                   std::chrono::milliseconds length,
                                                   std::chrono::milliseconds offset,
                                                   std::int64_t now_ms);

/// `utc` ("YYYY-MM-DD HH:MM:SS[.mmm]", UTC, as the databases' text) as
/// local time in `zone`, to the second: "YYYY-MM-DD HH:MM:SS ABBR" (the
/// zone's abbreviation, "CEST"). `utc` itself if it cannot be read.
std::string local_text(const date::time_zone* zone, const std::string& utc);

}  // namespace sqlock_cli
