// Reading a name's leader: the live exclusive row of the name and the value
// its holder proclaimed. Shared by Election::leader() and LeaderWatch.
#pragma once

#include <optional>
#include <string>

#include "contract/backend.hpp"
#include "sqlock/leadership.hpp"

namespace sqlock::detail {

/// The metadata key under which campaign() stores the value in the lock
/// row's `locked_by`: readers see it from the moment the lock is taken.
extern const char* const leader_value_key;

/// The live leader of `name` on `c`, or nullopt: no row, an expired one, or
/// a shared marker (a name held shared has no leader). Its value is the
/// one proclaimed for its fencing id, else the one stored in its metadata
/// at campaign(), else "". One round trip (Query::leader; find() on a table
/// without `<table>_leaders`).
std::optional<LeaderInfo> read_leader(Connection& c, const std::string& name);

/// Throws errc::invalid_argument unless `value` may be a leader's value:
/// UTF-8 without control characters, at most max_leader_value_bytes.
void validate_leader_value(const std::string& value);

}  // namespace sqlock::detail
