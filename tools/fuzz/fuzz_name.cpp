// fuzz_name — validate_lock_name() and is_valid_utf8() against a reference
// UTF-8 decoder written from the Unicode standard's table of well-formed
// byte sequences (Unicode 15, table 3-7), and printable() for messages.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/validate.hpp"
#include "fuzz_check.hpp"
#include "sqlock/error.hpp"

namespace {

// Table 3-7: each row is a first-byte range and the ranges of the bytes
// that may follow it.
struct Row {
    unsigned char lo, hi;
    int n;  // continuation bytes
    unsigned char second_lo, second_hi;
};
constexpr Row table[] = {
    {0x00, 0x7F, 0, 0, 0},       {0xC2, 0xDF, 1, 0x80, 0xBF}, {0xE0, 0xE0, 2, 0xA0, 0xBF},
    {0xE1, 0xEC, 2, 0x80, 0xBF}, {0xED, 0xED, 2, 0x80, 0x9F}, {0xEE, 0xEF, 2, 0x80, 0xBF},
    {0xF0, 0xF0, 3, 0x90, 0xBF}, {0xF1, 0xF3, 3, 0x80, 0xBF}, {0xF4, 0xF4, 3, 0x80, 0x8F},
};

bool reference_utf8(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const Row* row = nullptr;
        for (const Row& r : table)
            if (c >= r.lo && c <= r.hi) row = &r;
        if (!row) return false;
        for (int k = 1; k <= row->n; ++k) {
            if (i + k >= s.size()) return false;
            const unsigned char cc = static_cast<unsigned char>(s[i + k]);
            const unsigned char lo = k == 1 ? row->second_lo : 0x80;
            const unsigned char hi = k == 1 ? row->second_hi : 0xBF;
            if (cc < lo || cc > hi) return false;
        }
        i += row->n + 1;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string name(reinterpret_cast<const char*>(data), size);
    const bool utf8 = reference_utf8(name);
    FUZZ_CHECK(sqlock::detail::is_valid_utf8(name) == utf8, "is_valid_utf8 disagrees");

    const bool should_accept =
        !name.empty() && name.size() <= 128 && name.find('\0') == std::string::npos && utf8;
    try {
        sqlock::detail::validate_lock_name(name);
        FUZZ_CHECK(should_accept, "accepted a bad name");
    } catch (const sqlock::error& e) {
        FUZZ_CHECK(!should_accept, std::string("rejected a good name: ") + e.what());
        FUZZ_CHECK(e.category() == sqlock::errc::invalid_argument, e.what());
        FUZZ_CHECK(one_line(e.what()), e.what());
    }

    // printable(), the one rule for showing text: what messages show of a
    // hostile name is one line of valid UTF-8 without controls (C0, DEL,
    // C1), without quotes that would end the quoting around it, and with
    // every backslash starting a \xNN escape.
    const std::string shown = sqlock::detail::printable(name);
    FUZZ_CHECK(reference_utf8(shown), "printable() made invalid UTF-8");
    for (std::size_t i = 0; i < shown.size(); ++i) {
        const auto c = static_cast<unsigned char>(shown[i]);
        FUZZ_CHECK(c >= 0x20 && c != 0x7F && c != '\'', "printable() let a control through");
        if (c == 0xC2 && i + 1 < shown.size())
            FUZZ_CHECK(static_cast<unsigned char>(shown[i + 1]) > 0x9F,
                       "printable() let a C1 control through");
        if (c == '\\') FUZZ_CHECK(i + 3 < shown.size() && shown[i + 1] == 'x', "a bare backslash");
    }
    FUZZ_CHECK(shown.size() <= 64 * 4 + 3, "printable() too long");
    return 0;
}
