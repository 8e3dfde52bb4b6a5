// Where a database URL holds passwords, and the URL without them.
#include "text.hpp"

namespace sqlock::text {

std::vector<std::pair<std::size_t, std::size_t>> password_ranges(const std::string& url) {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    std::size_t scheme_end = url.find("://");
    std::size_t query_from = 0;
    if (scheme_end != std::string::npos) {
        // libpq ends the userinfo at the first '@' and the whole authority
        // at the first '/'; '?', '#' and ':' may be part of a password. A
        // password with a raw '@' (it should be %40) makes libpq read the
        // rest as the host, so redact up to the *last* '@' before the first
        // '/': a superset of what libpq reads as the password.
        std::size_t auth_start = scheme_end + 3;
        query_from = auth_start;
        const std::size_t slash = url.find('/', auth_start);
        const std::size_t colon = url.find(':', auth_start);
        std::size_t at = url.rfind('@', slash == std::string::npos ? std::string::npos : slash);
        // A raw '/' in the password (base64 makes them) ends the authority
        // early for every parser, so no '@' comes before it: then the last
        // '@' of the URL, past a ':' and with no '?' between the '/' and it
        // (an '@' in a query value, "?application_name=me@host", is not one;
        // base64 has no '?'), ends the password.
        if ((at == std::string::npos || at < auth_start) && slash != std::string::npos) {
            const std::size_t last = url.rfind('@');
            if (last != std::string::npos && last > slash && colon < slash &&
                url.find('?', slash) > last)
                at = last;
        }
        if (at != std::string::npos && at >= auth_start) {
            if (colon < at) ranges.emplace_back(colon + 1, at);
            query_from = at + 1;
        }
    }
    std::size_t q = url.find('?', query_from);
    if (q != std::string::npos) {
        std::size_t pos = q + 1;
        while ((pos = url.find("password=", pos)) != std::string::npos) {
            bool at_boundary = url[pos - 1] == '?' || url[pos - 1] == '&';
            std::size_t value = pos + 9;
            if (at_boundary) {
                std::size_t end = url.find('&', value);
                if (end == std::string::npos) end = url.size();
                ranges.emplace_back(value, end);
            }
            pos = value;
        }
    }
    return ranges;
}

bool password_holds_raw(const std::string& url, const char* chars) {
    for (const auto& [begin, end] : password_ranges(url)) {
        if (end >= url.size() || url[end] != '@') continue;  // a query's password=
        const std::string password = url.substr(begin, end - begin);
        if (password.find_first_of(chars) != std::string::npos) return true;
    }
    return false;
}

std::string redact_url(const std::string& url) {
    std::string out = url;
    auto ranges = password_ranges(url);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
        out.replace(it->first, it->second - it->first, "***");
    return printable(out);
}

}  // namespace sqlock::text
