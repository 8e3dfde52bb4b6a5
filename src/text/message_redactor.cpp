#include <algorithm>

#include "text.hpp"

namespace sqlock::text {
namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void replace_all(std::string& text, const std::string& needle, const std::string& with) {
    if (needle.empty()) return;
    std::size_t pos = 0;
    while ((pos = text.find(needle, pos)) != std::string::npos) {
        text.replace(pos, needle.size(), with);
        pos += with.size();
    }
}

}  // namespace

std::string percent_decode(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size()) {
            int hi = hex_value(text[i + 1]), lo = hex_value(text[i + 2]);
            if (hi >= 0 && lo >= 0) {
                out += static_cast<char>(hi * 16 + lo);
                i += 2;
                continue;
            }
        }
        out += text[i];
    }
    return out;
}

MessageRedactor::MessageRedactor(const std::string& url, std::vector<std::string> extra_secrets)
    : original_url_(url), redacted_url_(redact_url(url)), secrets_(std::move(extra_secrets)) {
    // The password as the URL spells it (the way libpq reads a URL), and
    // percent-decoded, as a client library may echo either.
    for (const auto& [begin, end] : password_ranges(url)) {
        const std::string raw = url.substr(begin, end - begin);
        secrets_.push_back(raw);
        secrets_.push_back(percent_decode(raw));
    }
    secrets_.erase(std::remove(secrets_.begin(), secrets_.end(), std::string()), secrets_.end());
    // Longest first, so a password containing another is hidden whole.
    std::sort(secrets_.begin(), secrets_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string MessageRedactor::operator()(const std::string& text) const {
    std::string out = text;
    replace_all(out, original_url_, redacted_url_);
    for (const std::string& secret : secrets_) replace_all(out, secret, "***");
    // One line: fold newlines, tabs and runs of spaces.
    std::string folded;
    folded.reserve(out.size());
    for (char c : out) {
        bool blank = c == '\n' || c == '\r' || c == '\t' || c == ' ';
        if (blank) {
            if (!folded.empty() && folded.back() != ' ') folded += ' ';
        } else {
            folded += c;
        }
    }
    while (!folded.empty() && folded.back() == ' ') folded.pop_back();
    return folded;
}

}  // namespace sqlock::text
