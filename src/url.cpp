#include "url.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "sqlock/error.hpp"
#include "sqlock/url.hpp"

namespace sqlock::detail {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::map<std::string, std::string> parse_query(const std::string& query, const std::string& shown) {
    std::map<std::string, std::string> params;
    std::size_t start = 0;
    while (start < query.size()) {
        std::size_t end = query.find('&', start);
        if (end == std::string::npos) end = query.size();
        std::string pair = query.substr(start, end - start);
        std::size_t eq = pair.find('=');
        if (pair.empty() || eq == std::string::npos || eq == 0)
            throw error(errc::invalid_argument, "malformed query parameter '" +
                                                    escape_controls(pair) + "' in database URL '" +
                                                    shown + "'");
        params[pair.substr(0, eq)] = pair.substr(eq + 1);
        start = end + 1;
    }
    return params;
}

}  // namespace

std::string escape_controls(const std::string& text) {
    // Messages are one line: control characters are shown as \xNN.
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7F) {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 0xF];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

std::string redact_url(const std::string& url) {
    std::string out = url;
    auto ranges = password_ranges(url);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
        out.replace(it->first, it->second - it->first, "***");
    return escape_controls(out);
}

std::string embedded_default_path() {
    std::string state = env_or_empty("XDG_STATE_HOME");
    if (state.empty() || state[0] != '/') {
        std::string home = env_or_empty("HOME");
        if (home.empty())
            throw error(errc::configuration,
                        "cannot place the default lock database: neither XDG_STATE_HOME nor HOME "
                        "is set (pass --db or set SQLOCK_DB)");
        // System users often have a home that does not exist (/nonexistent):
        // sqlock creates directories below a home, never the home itself.
        struct stat st {};
        if (::stat(home.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            throw error(errc::configuration,
                        "cannot place the default lock database: the home directory '" +
                            escape_controls(home) +
                            "' does not exist, and sqlock does not create it (pass --db or set "
                            "SQLOCK_DB)");
        state = home + "/.local/state";
    }
    return state + "/sqlock/locks.db";
}

DatabaseUrl parse_database_url(const std::string& given) {
    DatabaseUrl url;
    std::string text = given;
    if (text.empty()) {
        text = env_or_empty("SQLOCK_DB");
        if (text.empty()) {
            url.is_embedded_default = true;
            text = "sqlite://" + embedded_default_path();
        }
    }
    url.original = text;
    url.redacted = redact_url(text);

    if (starts_with(text, "postgresql://") || starts_with(text, "postgres://")) {
        url.scheme = DatabaseUrl::scheme_kind::postgresql;
        return url;
    }
    if (starts_with(text, "sqlite:")) {
        url.scheme = DatabaseUrl::scheme_kind::sqlite;
        std::string rest = text.substr(7);
        std::size_t q = rest.find('?');
        if (q != std::string::npos) {
            url.params = parse_query(rest.substr(q + 1), url.redacted);
            rest = rest.substr(0, q);
        }
        if (starts_with(rest, "//")) {
            // sqlite:///abs/path — the authority must be empty.
            rest = rest.substr(2);
            if (rest.empty() || rest[0] != '/')
                throw error(errc::invalid_argument,
                            "SQLite URL '" + url.redacted +
                                "' has a host part; use sqlite:///absolute/path.db or "
                                "sqlite:relative/path.db");
        }
        if (rest.empty())
            throw error(errc::invalid_argument,
                        "SQLite URL '" + url.redacted + "' names no file; use sqlite:///path.db");
        if (rest.find('\0') != std::string::npos)
            throw error(errc::invalid_argument, "SQLite URL contains a NUL byte");
        url.sqlite_path = rest;
        return url;
    }
    // One rule for every URL that cannot be read (no scheme, an unknown one,
    // a malformed SQLite or PostgreSQL URL): invalid_argument, the CLI's 64.
    // configuration (78) is for a readable URL whose database is not usable
    // as configured: a backend not built in, a missing file or table.
    std::size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0)
        throw error(errc::invalid_argument, "database URL '" + url.redacted +
                                                "' has no scheme; expected sqlite:///path.db or "
                                                "postgresql://user@host/db");
    throw error(errc::invalid_argument, "unknown database URL scheme '" +
                                            escape_controls(text.substr(0, colon)) + "' in '" +
                                            url.redacted + "'; expected sqlite: or postgresql:");
}

}  // namespace sqlock::detail

namespace sqlock {

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
        std::size_t slash = url.find('/', auth_start);
        std::size_t at = url.rfind('@', slash == std::string::npos ? std::string::npos : slash);
        if (at != std::string::npos && at >= auth_start) {
            std::size_t colon = url.find(':', auth_start);
            if (colon != std::string::npos && colon < at) ranges.emplace_back(colon + 1, at);
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

std::string redact_url(const std::string& url) {
    return detail::redact_url(url);
}

}  // namespace sqlock
