#include "sqlock/utf8.hpp"

namespace sqlock {

std::size_t utf8_sequence_length(const std::string& text, std::size_t pos,
                                 char32_t* code_point) noexcept {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    unsigned char c = s[pos];
    std::size_t extra;
    char32_t cp;
    if (c < 0x80) {
        extra = 0;
        cp = c;
    } else if (c >= 0xC2 && c <= 0xDF) {
        extra = 1;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        extra = 2;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        extra = 3;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (std::size_t k = 1; k <= extra; ++k) {
        if (pos + k >= n || (s[pos + k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[pos + k] & 0x3F);
    }
    if ((extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    if (code_point) *code_point = cp;
    return extra + 1;
}

}  // namespace sqlock
