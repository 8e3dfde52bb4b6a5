#include "sqlock/duration.hpp"

#include <cstdint>
#include <limits>

#include "base/validate.hpp"
#include "sqlock/error.hpp"

namespace sqlock {
namespace {

[[noreturn]] void reject(const std::string& text) {
    throw error(errc::invalid_argument,
                "invalid duration '" + detail::printable(text) +
                    "': use seconds (90) or units d, h, m, s, ms in that order (90s, 15m, 2h, "
                    "1d, 1h30m, 250ms)");
}

}  // namespace

duration parse_duration(const std::string& text) {
    if (text.empty()) reject(text);
    const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 4;
    std::int64_t total_ms = 0;
    std::size_t i = 0;
    int last_rank = 100;  // units must come in descending order, each at most once
    bool bare_number = true;
    while (i < text.size()) {
        std::int64_t value = 0;
        std::size_t digits = 0;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (value > limit / 10) reject(text);
            value = value * 10 + (text[i] - '0');
            ++i;
            ++digits;
        }
        if (digits == 0) reject(text);
        std::int64_t unit_ms;
        int rank;
        if (i == text.size()) {
            if (!bare_number) reject(text);  // "1h30" is ambiguous
            unit_ms = 1000;
            rank = 0;
        } else {
            bare_number = false;
            if (text.compare(i, 2, "ms") == 0) {
                unit_ms = 1;
                rank = 1;
                i += 2;
            } else {
                switch (text[i]) {
                    case 's':
                        unit_ms = 1000, rank = 2;
                        break;
                    case 'm':
                        unit_ms = 60 * 1000, rank = 3;
                        break;
                    case 'h':
                        unit_ms = 3600 * 1000, rank = 4;
                        break;
                    case 'd':
                        unit_ms = 24 * 3600 * 1000, rank = 5;
                        break;
                    default:
                        reject(text);
                }
                ++i;
            }
        }
        if (rank >= last_rank) reject(text);
        last_rank = rank;
        if (value > (limit - total_ms) / unit_ms) reject(text);
        total_ms += value * unit_ms;
    }
    return duration(total_ms);
}

std::string format_duration(duration d) {
    std::int64_t ms = d.count();
    std::string out;
    if (ms < 0) {
        out = "-";
        ms = -ms;
    }
    if (ms == 0) return "0s";
    const std::int64_t day = 86400000, hour = 3600000, minute = 60000, second = 1000;
    std::int64_t days = ms / day;
    ms %= day;
    std::int64_t hours = ms / hour;
    ms %= hour;
    std::int64_t minutes = ms / minute;
    ms %= minute;
    std::int64_t seconds = ms / second;
    ms %= second;
    if (days) out += std::to_string(days) + "d";
    if (hours) out += std::to_string(hours) + "h";
    if (minutes) out += std::to_string(minutes) + "m";
    if (seconds) out += std::to_string(seconds) + "s";
    if (ms) out += std::to_string(ms) + "ms";
    return out;
}

}  // namespace sqlock
