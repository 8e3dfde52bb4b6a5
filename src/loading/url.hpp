// Splitting a database URL into what a backend needs, in one place.
#pragma once

#include <map>
#include <string>

namespace sqlock::detail {

/// A database URL as the core reads it: its scheme picks the backend; the
/// rest is the backend's own grammar, read by the backend.
struct DatabaseUrl {
    std::string scheme;                // as written, without ':' ("postgresql")
    std::string backend;               // the backend serving it ("postgres"; backend_catalog.hpp)
    std::string original;              // as given; may contain a password: never print it
    std::string redacted;              // safe to print
    bool is_embedded_default = false;  // came from the built-in default
};

/// Parses `url` ("" means the default) as far as the core needs: the scheme
/// and the backend that serves it. Throws errc::invalid_argument for a URL
/// without a scheme or with one no backend serves, and errc::configuration
/// when the default cannot be placed (no home).
DatabaseUrl parse_database_url(const std::string& url);

/// Splits "a=1&b=2" into its pairs; errc::invalid_argument, naming the
/// redacted URL `shown`, for a pair without '=' or without a key. For the
/// backends' query parameters.
std::map<std::string, std::string> parse_query(const std::string& query, const std::string& shown);

/// `${XDG_STATE_HOME:-$HOME/.local/state}/sqlock/locks.db`: the embedded
/// default is a SQLite file.
std::string embedded_default_path();

}  // namespace sqlock::detail
