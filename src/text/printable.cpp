// The one rule for showing untrusted text (see text.hpp).
#include "text.hpp"

namespace sqlock::text {

namespace {

std::string shown(const std::string& text, std::size_t max_bytes, bool keep_quotes) {
    static const char* hex = "0123456789abcdef";
    auto escape = [](std::string& out, unsigned char c) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 0xF];
    };
    std::string out;
    const std::size_t n = text.size() < max_bytes ? text.size() : max_bytes;
    std::size_t i = 0;
    while (i < n) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7F || (!keep_quotes && (c == '\\' || c == '\'')))
                escape(out, c);
            else
                out += static_cast<char>(c);
            ++i;
            continue;
        }
        // One UTF-8 sequence, kept whole; a sequence cut by `max_bytes`,
        // anything malformed and the C1 controls (U+009B is a CSI to some
        // terminals) are escaped byte by byte.
        char32_t cp = 0;
        const std::size_t len = utf8_sequence_length(text, i, &cp);
        if (len == 0 || i + len > n || (cp >= 0x80 && cp <= 0x9F)) {
            escape(out, c);
            ++i;
            continue;
        }
        out.append(text, i, len);
        i += len;
    }
    if (text.size() > max_bytes) out += "...";
    return out;
}

}  // namespace

std::string printable(const std::string& text, std::size_t max_bytes) {
    return shown(text, max_bytes, false);
}

std::string printable_value(const std::string& text) {
    return shown(text, std::string::npos, true);
}

}  // namespace sqlock::text
