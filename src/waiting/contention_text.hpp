// How contention is told: the row in the way as a LockInfo, its holder and
// expiry as text, how long a caller waited, and the busy/timeout error that
// carries the row. Shared by the acquisition of single locks, semaphore
// slots and sets (wait_loop.cpp, lock_acquirer.cpp, set_acquirer.cpp).
#pragma once

#include <optional>
#include <string>

#include "contract/backend.hpp"
#include "sqlock/error.hpp"
#include "sqlock/lock_info.hpp"

namespace sqlock::detail {

/// A row as the caller sees it.
LockInfo to_info(const Row& row);

/// "expired", or "expires in 2m".
std::string describe_expiry(double seconds_left);

/// Who holds a row and until when; "another holder (just taken)" when the
/// row could not be read.
std::string holder_text(const std::optional<LockInfo>& info);

/// "after waiting ..." reads best rounded: 250ms, 2.5s, 10s, 1m30s.
std::string waited_text(duration waited);

/// Busy and timeout errors carry the row in the way, when there is one.
[[noreturn]] void contention_error(errc category, const std::string& message,
                                   const std::optional<LockInfo>& info);

}  // namespace sqlock::detail
