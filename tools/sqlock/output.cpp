#include "output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "sqlock/utf8.hpp"

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
        // One UTF-8 sequence; anything malformed is escaped byte-wise, and so
        // are C1 controls (U+009B is a CSI to some terminals).
        char32_t cp = 0;
        std::size_t len = sqlock::utf8_sequence_length(text, i, &cp);
        if (len == 0 || (cp >= 0x80 && cp <= 0x9F)) {
            out += escaped(c);
            ++i;
            continue;
        }
        out.append(text, i, len);
        i += len;
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
