#include "url.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "sqlock/error.hpp"
#include "text.hpp"

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
                                                    text::printable(pair) + "' in database URL '" +
                                                    shown + "'");
        params[pair.substr(0, eq)] = pair.substr(eq + 1);
        start = end + 1;
    }
    return params;
}

}  // namespace

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
                            text::printable(home) +
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
    url.redacted = text::redact_url(text);

    if (starts_with(text, "postgresql://") || starts_with(text, "postgres://")) {
        url.scheme = DatabaseUrl::scheme_kind::postgresql;
        return url;
    }
    // mariadb:// and mysql:// (one backend); read by the backend itself
    // (src/backends/mariadb/mariadb_url.hpp).
    if (starts_with(text, "mariadb://") || starts_with(text, "mysql://")) {
        url.scheme = DatabaseUrl::scheme_kind::mariadb;
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
                                                "' has no scheme; expected sqlite:///path.db, "
                                                "postgresql://user@host/db or "
                                                "mariadb://user@host/db");
    throw error(errc::invalid_argument,
                "unknown database URL scheme '" + text::printable(text.substr(0, colon)) +
                    "' in '" + url.redacted + "'; expected sqlite:, postgresql: or mariadb:");
}

}  // namespace sqlock::detail
