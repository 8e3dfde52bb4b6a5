#include "url.hpp"

#include <cstdlib>

#include "sqlock/error.hpp"

namespace sqlock::detail {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

// Hides the value of every `password=` parameter in a query string.
std::string redact_query(std::string query) {
    std::size_t pos = 0;
    while ((pos = query.find("password=", pos)) != std::string::npos) {
        bool at_boundary = pos == 0 || query[pos - 1] == '?' || query[pos - 1] == '&';
        std::size_t value = pos + 9;
        if (!at_boundary) {
            pos = value;
            continue;
        }
        std::size_t end = query.find('&', value);
        if (end == std::string::npos) end = query.size();
        query.replace(value, end - value, "***");
        pos = value + 3;
    }
    return query;
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
            throw error(errc::invalid_argument,
                        "malformed query parameter '" + pair + "' in database URL '" + shown + "'");
        params[pair.substr(0, eq)] = pair.substr(eq + 1);
        start = end + 1;
    }
    return params;
}

}  // namespace

std::string redact_url(const std::string& url) {
    std::string out = url;
    std::size_t scheme_end = out.find("://");
    if (scheme_end != std::string::npos) {
        std::size_t auth_start = scheme_end + 3;
        std::size_t auth_end = out.find_first_of("/?#", auth_start);
        if (auth_end == std::string::npos) auth_end = out.size();
        // The last '@' of the authority ends the userinfo (passwords may hold '@').
        std::size_t at = out.rfind('@', auth_end);
        if (at != std::string::npos && at >= auth_start) {
            std::size_t colon = out.find(':', auth_start);
            if (colon != std::string::npos && colon < at)
                out.replace(colon + 1, at - colon - 1, "***");
        }
    }
    std::size_t q = out.find('?');
    if (q != std::string::npos) out = out.substr(0, q + 1) + redact_query(out.substr(q + 1));
    return out;
}

std::string embedded_default_path() {
    std::string state = env_or_empty("XDG_STATE_HOME");
    if (state.empty() || state[0] != '/') {
        std::string home = env_or_empty("HOME");
        if (home.empty())
            throw error(errc::configuration,
                        "cannot place the default lock database: neither XDG_STATE_HOME nor HOME "
                        "is set (pass --db or set SQLOCK_DB)");
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
    std::size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0)
        throw error(errc::configuration, "database URL '" + url.redacted +
                                             "' has no scheme; expected sqlite:///path.db or "
                                             "postgresql://user@host/db");
    throw error(errc::configuration, "unknown database URL scheme '" + text.substr(0, colon) +
                                         "' in '" + url.redacted +
                                         "'; expected sqlite: or postgresql:");
}

}  // namespace sqlock::detail
