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

/// `conninfo` (bounded_conninfo's) with its host names looked up within
/// `timeout` (host_resolution.hpp) and given to libpq as `hostaddr`, so that
/// libpq's own lookup, which nothing bounds, never runs. `host` stays: libpq
/// still checks the server's certificate, finds ~/.pgpass entries and names
/// the server by it. A name with several addresses becomes one entry per
/// address, in the resolver's order, as libpq would have tried them; a name
/// of several that does not resolve is left out, as libpq skips it.
/// Unchanged when there is nothing to look up: no `host` (libpq's default
/// socket, or PGHOST or a service file, which libpq reads and resolves
/// itself), socket directories only, numeric addresses only, or a `hostaddr`
/// of the URL's own. Throws std::runtime_error naming each host's problem
/// when no host is left.
std::string resolved_conninfo(const std::string& conninfo, duration timeout);

}  // namespace sqlock::detail::postgres
