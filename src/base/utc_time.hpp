// UTC times as the databases write them: "YYYY-MM-DD HH:MM:SS.mmm".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace sqlock::detail {

/// Milliseconds since the Unix epoch as UTC text (history/locker_runs.cpp).
std::string utc_text(std::int64_t ms);

/// UTC text ("T" separator and a missing fraction accepted) as a time
/// point; the epoch for text that is no time (lock_info.cpp).
std::chrono::system_clock::time_point parse_utc(const std::string& text) noexcept;

}  // namespace sqlock::detail
