// UTF-8: the one decoder sqlock uses to validate names and to show text.
#include "text.hpp"

namespace sqlock::text {

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

bool is_valid_utf8(const std::string& text) noexcept {
    for (std::size_t i = 0; i < text.size();) {
        std::size_t len = utf8_sequence_length(text, i);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

}  // namespace sqlock::text
