// Splitting a database URL into what a backend needs, in one place.
#pragma once

#include <map>
#include <string>

namespace sqlock::detail {

struct DatabaseUrl {
    enum class scheme_kind { sqlite, postgresql, mariadb };
    scheme_kind scheme = scheme_kind::sqlite;
    std::string original;  // as given; may contain a password: never print it
    std::string redacted;  // safe to print
    std::string sqlite_path;
    std::map<std::string, std::string> params;  // sqlite query parameters
    bool is_embedded_default = false;           // came from the built-in default
};

/// Parses `url` ("" means the default). Throws errc::invalid_argument for a
/// URL it cannot read (no scheme, an unknown one, malformed), and
/// errc::configuration when the default cannot be placed (no home).
DatabaseUrl parse_database_url(const std::string& url);

/// `${XDG_STATE_HOME:-$HOME/.local/state}/sqlock/locks.db`.
std::string embedded_default_path();

}  // namespace sqlock::detail
