// Host names to addresses, within a time bound.
//
// getaddrinfo(3) cannot be interrupted and takes no timeout: on a host cut
// off from its DNS servers (packets dropped, not refused) it waits for the
// resolver's own timeouts, 5 s per try and server by default, however short
// the caller's db_timeout. libpq and the MariaDB connector call it before
// their connect timeouts start. So the backends resolve first, here, and
// hand the drivers the numeric addresses: each lookup runs on a thread of
// its own that the caller stops waiting for at the bound. A lookup that
// overruns is left to finish by itself (it holds nothing of the caller's)
// and its answer is dropped.
#pragma once

#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

/// What became of one host name.
struct Resolution {
    std::vector<std::string> addresses;  // numeric, in getaddrinfo's order; empty on failure
    std::string problem;                 // why there are none ("" when there are)
};

/// True for an IPv4 or IPv6 address written out ("10.0.0.5", "::1"): no
/// lookup needed.
bool is_numeric_address(const std::string& host);

/// Resolves every name in `hosts` (TCP addresses of the families this
/// machine has configured), all at once, waiting at most `timeout` in all.
/// One Resolution per name, in order. Numeric addresses come back as they
/// are, without a thread. Never throws for a name that does not resolve or
/// does not answer in time: that is the Resolution's `problem`, so a caller
/// with several hosts can go on with the others.
std::vector<Resolution> resolve_hosts(const std::vector<std::string>& hosts, duration timeout);

}  // namespace sqlock::detail
