// Checking a PostgreSQL URL the way libpq will read it, before connecting.
#pragma once

#include <string>

#include "sqlock/duration.hpp"
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

/// The libpq connection string for `url` with sqlock's time bounds added
/// where the URL does not set them itself (a URL's own value always wins):
///   connect_timeout       `timeout` in whole seconds (libpq's minimum is 2);
///   keepalives=1, keepalives_idle, keepalives_interval, keepalives_count:
///                         a dead peer is noticed within about `timeout`;
///   tcp_user_timeout      `timeout`: data the peer does not acknowledge
///                         breaks the connection.
/// A keyword=value string (libpq's other format), so no URL re-encoding is
/// involved. Throws like parse_conninfo().
std::string bounded_conninfo(const DatabaseUrl& url, duration timeout);

}  // namespace sqlock::detail::postgres
