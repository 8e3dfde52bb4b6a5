#include "output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace sqlock_cli {

void write_all(int fd, const std::string& text) noexcept {
    std::size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // nowhere to complain to
        done += static_cast<std::size_t>(n);
    }
}

void Output::data(const std::string& text) {
    std::fputs(text.c_str(), stdout);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
}

void Output::result(const std::string& line) const {
    if (quiet_) return;
    std::fputs(line.c_str(), stdout);
    std::fputc('\n', stdout);
}

void Output::note(const std::string& message) const {
    if (quiet_) return;
    error(message);
}

void Output::detail(const std::string& message) const {
    if (verbose_ && !quiet_) error(message);
}

void Output::error(const std::string& message) {
    // stdout may hold buffered results; keep the order a reader expects.
    std::fflush(stdout);
    write_all(STDERR_FILENO, "sqlock: " + one_line(message) + "\n");
}

std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
    return text;
}

std::string terminal_safe(const std::string& text) {
    auto escaped = [](unsigned char c) {
        static const char* hex = "0123456789abcdef";
        return std::string("\\x") + hex[c >> 4] + hex[c & 0xF];
    };
    std::string out;
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            if (c < 0x20 || c == 0x7F || c == '\\')
                out += escaped(c);
            else
                out += static_cast<char>(c);
            ++i;
            continue;
        }
        // Decode one UTF-8 sequence; anything malformed is escaped byte-wise.
        int extra = -1;
        unsigned cp = 0;
        if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            cp = c & 0x07;
        }
        bool ok = extra > 0;
        for (int k = 1; ok && k <= extra; ++k) {
            if (i + k >= n || (s[i + k] & 0xC0) != 0x80) {
                ok = false;
                break;
            }
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (ok && ((extra == 2 && cp < 0x800) || (extra == 3 && cp < 0x10000) || cp > 0x10FFFF ||
                   (cp >= 0xD800 && cp <= 0xDFFF)))
            ok = false;
        if (ok && cp >= 0x80 && cp <= 0x9F) ok = false;  // C1 controls (CSI is U+009B)
        if (!ok) {
            out += escaped(c);
            ++i;
            continue;
        }
        out.append(text, i, static_cast<std::size_t>(extra) + 1);
        i += static_cast<std::size_t>(extra) + 1;
    }
    return out;
}

std::string in_quotes(const std::string& name) {
    return "'" + terminal_safe(name) + "'";
}

std::string at_database(const std::string& redacted_url) {
    return " [" + terminal_safe(redacted_url) + "]";
}

}  // namespace sqlock_cli
