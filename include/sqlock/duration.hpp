// Human durations: "90", "90s", "15m", "2h", "1d", "1h30m", "250ms".
#pragma once

#include <chrono>
#include <string>

namespace sqlock {

using duration = std::chrono::milliseconds;

/// Parses a duration. A bare number means seconds. Units: ms, s, m, h, d, and
/// combinations in descending order ("1h30m"). Throws `error` with category
/// `invalid_argument` naming the accepted forms on anything else, including
/// overflow. Zero is accepted here; callers decide whether zero makes sense.
duration parse_duration(const std::string& text);

/// Formats a duration compactly ("1h30m", "45s", "250ms", "0s").
std::string format_duration(duration d);

}  // namespace sqlock
