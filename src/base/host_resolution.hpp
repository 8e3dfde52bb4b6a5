// Host names to addresses, within a time bound.
//
// getaddrinfo(3) cannot be interrupted and takes no timeout: on a host cut
// off from its DNS servers (packets dropped, not refused) it waits for the
// resolver's own timeouts, 5 s per try and server by default, however short
// the caller's db_timeout. libpq and the MariaDB connector call it before
// their connect timeouts start. So the backends resolve first, here, and
// hand the drivers the numeric addresses: each lookup runs on a thread of
// its own ("sqlock-resolve") that the caller stops waiting for at the
// bound. A lookup that overruns is left to finish by itself (it holds
// nothing of the caller's); a later request for the same name while it is
// still under way waits for it instead of starting another, so an outage
// leaves one blocked thread per name, not one per connection attempt.
#pragma once

#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// What became of one host name.
struct Resolution {
    bool answered = false;               // false: not waited for (see resolve_in_order)
    std::vector<std::string> addresses;  // numeric, in getaddrinfo's order
    std::string problem;                 // why there are none, when answered without any
};

/// True for an IPv4 or IPv6 address written out ("10.0.0.5", "::1"): no
/// lookup needed.
bool is_numeric_address(const std::string& host);

/// Looks up every name in `hosts` at once (TCP addresses, with the hints
/// libpq and the MariaDB connector give), then waits for them in list
/// order, `timeout` in all, until the driver has somewhere to connect: a
/// host with addresses, a numeric address (given back as it is), or an
/// entry "" (one the driver reaches without a lookup, such as a socket). A
/// driver tries hosts in order and uses the first that works; the names
/// after that point that have not answered by then come back unanswered,
/// for the caller to leave to the driver. With `wait_for_all`, every name
/// is waited for (a driver that may pass over reachable hosts, looking for
/// a primary). Never throws for a name that does not resolve or does not
/// answer in time: that is its Resolution's `problem`.
std::vector<Resolution> resolve_in_order(const std::vector<std::string>& hosts, duration timeout,
                                         bool wait_for_all = false);

/// For a doctor: `names` looked up as a connection would (resolve_in_order),
/// timed, as one line ("db1: 10.0.0.5, 10.0.0.6 (in 2ms)"; entries that
/// need no lookup are left out), and what looks wrong: a name that did not
/// resolve, or lookups slow enough (over half of `timeout`) that
/// connections spend their time waiting for the resolver.
struct LookupReport {
    std::string fact;
    std::vector<std::string> problems;
};
LookupReport report_lookups(const std::vector<std::string>& names, duration timeout,
                            bool wait_for_all = false);

}  // namespace sqlock::detail
