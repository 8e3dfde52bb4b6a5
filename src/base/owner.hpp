// The `locked_by` JSON: who holds a lock.
#pragma once

#include <map>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/lock_info.hpp"

namespace sqlock::detail {

struct Owner {
    std::string token;      // random guid, the owner token
    std::string locked_by;  // the JSON text stored in the row
};

/// Builds a fresh owner for this process: host, pid, a new random guid, user,
/// program, and the caller's metadata under "meta". DBIx::Locker stores JSON
/// with host, guid and pid too, so each can read the other's rows.
/// Throws errc::invalid_argument if the result exceeds 1024 bytes.
Owner make_owner(const std::map<std::string, std::string>& metadata);
/// With a minimum hold, also records it and the lease (Holder::min_hold_ms,
/// lease_ms), so that others can tell a finished job's kept row.
Owner make_owner(const std::map<std::string, std::string>& metadata, duration min_hold,
                 duration lease);

/// This host's name as sqlock writes it into `locked_by`.
const std::string& this_host();
/// This process's user and program (/proc/self/comm), as in `locked_by`.
const std::string& this_user();
const std::string& this_program();

/// Parses a `locked_by` column leniently: never throws.
Holder parse_holder(const std::string& locked_by) noexcept;

/// A fresh random token (32 hex digits).
std::string random_token();

}  // namespace sqlock::detail
