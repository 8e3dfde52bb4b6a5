// fuzz_duration — sqlock::parse_duration() against an independent reference
// parser, and the round trip through format_duration().
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "fuzz_check.hpp"
#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"

namespace {

constexpr std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 4;

// The documented grammar, written separately: either a bare number of
// seconds, or number+unit pairs with units strictly descending among
// d, h, m, s, ms; the total at most `limit` milliseconds.
std::optional<std::int64_t> reference(const std::string& text) {
    if (text.empty()) return std::nullopt;
    __int128 total = 0;
    int last = 6;
    std::size_t i = 0;
    bool any_unit = false;
    while (i < text.size()) {
        __int128 value = 0;
        std::size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            value = value * 10 + (text[i] - '0');
            if (value > limit) value = __int128(limit) + 1;  // saturate: too big anyway
            ++i;
        }
        if (i == start) return std::nullopt;
        __int128 unit;
        int rank;
        if (i == text.size()) {
            if (any_unit) return std::nullopt;
            unit = 1000, rank = 0;
        } else if (text.compare(i, 2, "ms") == 0) {
            unit = 1, rank = 1, i += 2;
        } else if (text[i] == 's') {
            unit = 1000, rank = 2, ++i;
        } else if (text[i] == 'm') {
            unit = 60000, rank = 3, ++i;
        } else if (text[i] == 'h') {
            unit = 3600000, rank = 4, ++i;
        } else if (text[i] == 'd') {
            unit = 86400000, rank = 5, ++i;
        } else {
            return std::nullopt;
        }
        if (rank != 0) any_unit = true;
        if (rank >= last) return std::nullopt;
        last = rank;
        total += value * unit;
        if (total > limit) return std::nullopt;
    }
    return static_cast<std::int64_t>(total);
}

void round_trip(std::int64_t ms) {
    const std::string text = sqlock::format_duration(sqlock::duration(ms));
    for (char c : text)
        FUZZ_CHECK((c >= '0' && c <= '9') || c == 'd' || c == 'h' || c == 'm' || c == 's',
                   "format_duration(" + std::to_string(ms) + ") = " + text);
    FUZZ_CHECK(sqlock::parse_duration(text).count() == ms,
               "round trip of " + std::to_string(ms) + " via " + text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const auto expected = reference(text);
    try {
        const auto d = sqlock::parse_duration(text);
        FUZZ_CHECK(expected.has_value(), "accepted '" + text + "'");
        FUZZ_CHECK(d.count() == *expected, "'" + text + "' gave " + std::to_string(d.count()));
        round_trip(d.count());
    } catch (const sqlock::error& e) {
        FUZZ_CHECK(!expected.has_value(), "rejected '" + text + "': " + e.what());
        FUZZ_CHECK(e.category() == sqlock::errc::invalid_argument, e.what());
        FUZZ_CHECK(one_line(e.what()), e.what());
    }
    // Any millisecond count in range formats and parses back to itself.
    if (size >= 8) {
        std::int64_t ms;
        std::memcpy(&ms, data, 8);
        if (ms < 0) ms = -(ms + 1);
        round_trip(ms % (limit + 1));
    }
    return 0;
}
