#include "common/output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "text.hpp"

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

namespace {

// The errno of the first write to stdout that failed (0: none yet).
int& data_errno() {
    static int first = 0;
    return first;
}

void note_data_error() {
    if (std::ferror(stdout) && data_errno() == 0) data_errno() = errno != 0 ? errno : EIO;
}

}  // namespace

void Output::data(const std::string& text) {
    errno = 0;
    std::fputs(text.c_str(), stdout);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
    note_data_error();
}

std::optional<std::string> Output::finish_data() {
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        note_data_error();
        std::clearerr(stdout);
        const int why = data_errno() != 0 ? data_errno() : EIO;
        data_errno() = 0;
        return std::string(std::strerror(why));
    }
    return std::nullopt;
}

namespace {

Output::line_sink& sink_slot() {
    static Output::line_sink sink;
    return sink;
}

}  // namespace

void Output::redirect(line_sink sink) {
    sink_slot() = std::move(sink);
}

void Output::write_line(line_kind kind, const std::string& message) {
    if (const line_sink& sink = sink_slot()) {
        sink(kind, message);
        return;
    }
    // stdout may hold buffered results; keep the order a reader expects.
    std::fflush(stdout);
    write_all(STDERR_FILENO, "sqlock: " + one_line(message) + "\n");
}

void Output::result(const std::string& line) const {
    if (quiet_) return;
    write_line(line_kind::result, line);
}

void Output::note(const std::string& message) const {
    if (quiet_) return;
    write_line(line_kind::note, message);
}

void Output::detail(const std::string& message) const {
    if (verbose_ && !quiet_) write_line(line_kind::detail, message);
}

void Output::error(const std::string& message) {
    write_line(line_kind::error, message);
}

std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
    return text;
}

std::string in_quotes(const std::string& name) {
    // Cut long: a 100 KB argument refused as a name must not come back as a
    // 100 KB line. Every valid name (128 bytes at most) is shown whole.
    return "'" + sqlock::text::printable(name, 512) + "'";
}

std::string pasteable(const std::string& text) {
    if (sqlock::text::printable(text) == text) {  // nothing to escape
        std::string out = "'";
        for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out + "'";
    }
    // ANSI-C quoting (bash, zsh, ksh): every byte survives a copy and paste.
    static const char* hex = "0123456789abcdef";
    std::string out = "$'";
    for (unsigned char c : text) {
        if (c == '\'' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c >= 0x7F) {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "'";
}

std::string count_of(std::size_t n, const std::string& noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

namespace {

// Zero-width: combining marks and joiners that attach to the previous
// character (the ranges most text meets; not all of Unicode's Mn).
bool zero_width(char32_t cp) {
    return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x0483 && cp <= 0x0489) ||
           (cp >= 0x0591 && cp <= 0x05BD) || (cp >= 0x0610 && cp <= 0x061A) ||
           (cp >= 0x064B && cp <= 0x065F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
           (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
           (cp >= 0xFE20 && cp <= 0xFE2F) || (cp >= 0xE0100 && cp <= 0xE01EF);
}

// Two columns: East Asian Wide and Fullwidth (Unicode's EastAsianWidth W/F),
// emoji included, as terminals draw them.
bool double_width(char32_t cp) {
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x231A && cp <= 0x231B) ||
           (cp >= 0x2329 && cp <= 0x232A) || (cp >= 0x23E9 && cp <= 0x23EC) ||
           (cp >= 0x25FD && cp <= 0x25FE) || (cp >= 0x2614 && cp <= 0x2615) ||
           (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0x33FF) ||
           (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xA000 && cp <= 0xA4CF) || (cp >= 0xA960 && cp <= 0xA97F) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0xFE10 && cp <= 0xFE19) || (cp >= 0xFE30 && cp <= 0xFE6F) ||
           (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) ||
           (cp >= 0x1F300 && cp <= 0x1F64F) || (cp >= 0x1F900 && cp <= 0x1F9FF) ||
           (cp >= 0x20000 && cp <= 0x3FFFD);
}

}  // namespace

std::size_t display_width(const std::string& text) {
    std::size_t width = 0;
    std::size_t i = 0;
    while (i < text.size()) {
        char32_t cp = 0;
        std::size_t len = sqlock::text::utf8_sequence_length(text, i, &cp);
        if (len == 0) {  // shown as \xNN by text::printable
            width += 4;
            ++i;
            continue;
        }
        if (!zero_width(cp)) width += double_width(cp) ? 2 : 1;
        i += len;
    }
    return width;
}

std::string at_database(const std::string& redacted_url) {
    return " [" + sqlock::text::printable(redacted_url, 1024) + "]";  // cut: no 100 KB lines
}

}  // namespace sqlock_cli
