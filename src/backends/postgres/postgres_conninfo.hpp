// Checking a PostgreSQL URL the way libpq will read it, before connecting.
#pragma once

#include <string>

#include "url.hpp"

namespace sqlock::detail::postgres {

/// What libpq makes of a URL (only what sqlock needs).
struct ConnInfo {
    std::string password;  // decoded; empty if the URL has none
};

/// Parses `url.original` with libpq's own parser (PQconninfoParse: no network,
/// no environment, no ~/.pgpass), so a malformed URL (an unknown parameter,
/// a bad %-escape) is reported when the Locker is made, as
/// errc::invalid_argument, instead of as a connection failure on first use.
/// The message never contains the password.
ConnInfo parse_conninfo(const DatabaseUrl& url);

}  // namespace sqlock::detail::postgres
