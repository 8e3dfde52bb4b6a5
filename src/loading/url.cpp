#include "loading/url.hpp"

#include <sys/stat.h>

#include <cstdlib>

#include "loading/backend_catalog.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail {
namespace {

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

}  // namespace

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

    std::size_t colon = text.find(':');
    if (colon != std::string::npos && colon > 0) {
        const std::string scheme = text.substr(0, colon);
        if (const CatalogEntry* entry = find_backend_by_scheme(scheme)) {
            url.scheme = scheme;
            url.backend = entry->name;
            return url;
        }
    }
    // One rule for every URL that cannot be read (no scheme, an unknown one,
    // a malformed SQLite or PostgreSQL URL): invalid_argument, the CLI's 64.
    // configuration (78) is for a readable URL whose database is not usable
    // as configured: a backend not built in, a missing file or table.
    if (colon == std::string::npos || colon == 0)
        throw error(errc::invalid_argument, "database URL '" + url.redacted +
                                                "' has no scheme; expected " +
                                                known_schemes_text() + " (e.g. sqlite:///path.db)");
    throw error(errc::invalid_argument, "unknown database URL scheme '" +
                                            text::printable(text.substr(0, colon)) + "' in '" +
                                            url.redacted + "'; expected " + known_schemes_text());
}

}  // namespace sqlock::detail
