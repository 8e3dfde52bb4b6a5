// Locker::lock_activity(): every name with a live holder, a waiter in line
// or an election, and the table's counts, gathered in one look.
#pragma once

#include "sqlock/lock_info.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// The activity of the lock table `state` opens (a few aggregate queries;
/// the rows read are the live ones). The table is initialised already.
LockActivity lock_activity(LockerState& state);

}  // namespace sqlock::detail
