// Node choice — where a new connection to a host list starts.
//
// A URL with several hosts (the nodes of a Galera cluster) is tried in
// order, starting from the node this process last reached: a process sticks
// to one node while it answers, so that its connections see one node's
// state, and once a node fails, new connections start past it instead of
// waiting for it again (each host gets a share of the connection's bound,
// mariadb_link.hpp). A node that comes back is used again when the one after
// it fails. Process-wide, keyed by the redacted URL; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sqlock::detail::mariadb {

/// The order in which to try the `count` hosts of `url`: the preferred one
/// first, then the others in the URL's order after it, wrapping around.
std::vector<std::size_t> nodes_in_order(const std::string& url, std::size_t count);

/// Host `node` of `url` answered and is ready: new connections start there.
void node_reached(const std::string& url, std::size_t node);

/// Host `node` of `url` failed (no answer, refused, not ready, left the
/// cluster): if new connections start there, they start at the next one.
void node_failed(const std::string& url, std::size_t node, std::size_t count);

/// How many times host `node` of `url` failed so far in this process. A
/// pooled connection to a host that failed since it was opened is not
/// used again: it would wait its whole bound for a host another connection
/// already found gone (a heartbeat's renewal, for one, has no bound to
/// spare for that and for a new connection after it).
std::uint64_t node_failures(const std::string& url, std::size_t node);

}  // namespace sqlock::detail::mariadb
