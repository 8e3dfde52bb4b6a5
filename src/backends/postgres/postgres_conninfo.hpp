// Checking a PostgreSQL URL the way libpq will read it, before connecting.
#pragma once

#include <string>
#include <vector>

#include "loading/url.hpp"
#include "sqlock/duration.hpp"

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

/// A connection string with its host names looked up (resolved_conninfo).
struct ResolvedConnInfo {
    std::string conninfo;
    std::string skipped;  // the hosts left out, and why ("" for none): for the error
};

/// `conninfo` (bounded_conninfo's) with its host names looked up within
/// `timeout` (host_resolution.hpp) and given to libpq as `hostaddr`, so that
/// libpq's own lookup, which nothing bounds, does not run. `host` stays:
/// libpq still checks the server's certificate, finds ~/.pgpass entries and
/// names the server by it. A name with several addresses becomes one entry
/// per address, in the resolver's order, as libpq would have tried them.
/// In a list of hosts, lookups wait in list order until libpq has a host to
/// connect to (libpq uses the first that works): a name before it that did
/// not resolve in time is left out, as libpq skips it; a name after it that
/// has not answered yet is left for libpq to look up, as before, should it
/// get that far. With target_session_attrs (other than "any"), where libpq
/// may pass over hosts it reaches, every name is waited for. Unchanged when there is nothing to
/// look up or libpq takes hosts or ports from elsewhere: no `host` (libpq's default socket, or
/// PGHOST), socket directories and numeric addresses only, a `hostaddr` of the URL's own, a service
/// file, PGHOSTADDR, or a list of ports in PGPORT. Throws std::runtime_error naming each host's
/// problem when no host is left.
ResolvedConnInfo resolved_conninfo(const std::string& conninfo, duration timeout);

/// What resolved_conninfo looks up: every host in order ("" for a socket),
/// and whether it waits for all (target_session_attrs other than "any":
/// libpq may pass over hosts it reaches) or in order until one resolves.
/// No hosts when it would leave `conninfo` as it is. For the doctor.
struct LookupPlan {
    std::vector<std::string> hosts;
    bool wait_for_all = false;
};
LookupPlan lookup_plan(const std::string& conninfo);

/// One host of a list in a connection string, and a connection string
/// that reaches that host alone.
struct HostEntry {
    std::string label;     // "db2.internal:5432", as the list names it
    std::string conninfo;  // that host (its hostaddr, its port) alone, any role
};

/// With a list of two or more hosts in `conninfo` (bounded_conninfo's), one
/// entry per host: `conninfo` naming only that host, with
/// target_session_attrs=any, so that it reaches the host whether it is a
/// primary or a standby. Empty for a single host. For the doctor.
std::vector<HostEntry> each_host(const std::string& conninfo);

}  // namespace sqlock::detail::postgres
