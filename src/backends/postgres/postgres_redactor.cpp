#include "postgres_redactor.hpp"

#include <algorithm>
#include <cstdlib>

namespace sqlock::detail::postgres {
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

// The password as the URL spells it: in the userinfo ("user:secret@host")
// and in any "password=" query parameter. The userinfo is read both the way
// libpq reads it (up to the first '@' before any '/') and the way a URL
// parser would (the last '@' before the first '/', '?' or '#'): whichever
// way the URL is meant, the text is hidden.
std::vector<std::string> passwords_in(const std::string& url) {
    std::vector<std::string> found;
    std::size_t scheme_end = url.find("://");
    if (scheme_end != std::string::npos) {
        const std::size_t start = scheme_end + 3;
        auto password_before = [&](std::size_t at) {
            std::size_t colon = url.find(':', start);
            if (colon != std::string::npos && colon < at)
                found.push_back(url.substr(colon + 1, at - colon - 1));
        };
        std::size_t libpq_end = url.find_first_of("@/", start);
        if (libpq_end != std::string::npos && url[libpq_end] == '@') password_before(libpq_end);
        std::size_t auth_end = url.find_first_of("/?#", start);
        if (auth_end == std::string::npos) auth_end = url.size();
        std::size_t at = url.rfind('@', auth_end);
        if (at != std::string::npos && at >= start) password_before(at);
    }
    std::size_t q = url.find('?');
    while (q != std::string::npos) {
        std::size_t begin = q + 1;
        std::size_t end = url.find('&', begin);
        std::string pair = url.substr(begin, end == std::string::npos ? end : end - begin);
        if (pair.compare(0, 9, "password=") == 0) found.push_back(pair.substr(9));
        q = end;
    }
    return found;
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

Redactor::Redactor(const DatabaseUrl& url, const std::vector<std::string>& extra_secrets)
    : original_url_(url.original), redacted_url_(url.redacted), secrets_(extra_secrets) {
    for (const std::string& raw : passwords_in(url.original)) {
        secrets_.push_back(raw);
        secrets_.push_back(percent_decode(raw));
    }
    // libpq also takes the password from the environment; it does not echo
    // it, but costs nothing to be sure.
    if (const char* env = std::getenv("PGPASSWORD")) secrets_.push_back(env);
    secrets_.erase(std::remove(secrets_.begin(), secrets_.end(), std::string()), secrets_.end());
    // Longest first, so a password containing another is hidden whole.
    std::sort(secrets_.begin(), secrets_.end(),
              [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

std::string Redactor::operator()(const std::string& text) const {
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

}  // namespace sqlock::detail::postgres
