// Several names taken at once, all or nothing (set_acquirer.cpp says how):
// what Locker::try_lock_all() and lock_all() call.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/lock_set.hpp"
#include "sqlock/options.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// The most names a lock set takes (Locker::max_set_size).
constexpr std::size_t max_set_names = 256;

/// Every name of `names` in `options.mode`, at once or not at all: one
/// attempt (nullopt when a name is held, or promised to callers waiting in
/// line), or waited for as `options` say.
std::optional<LockSet> try_lock_all(const std::shared_ptr<LockerState>& s,
                                    const std::vector<std::string>& names,
                                    const LockOptions& options);
LockSet lock_all(const std::shared_ptr<LockerState>& s, const std::vector<std::string>& names,
                 const LockOptions& options);
/// The same with each name's own mode (`options.mode` left exclusive).
std::optional<LockSet> try_lock_members(const std::shared_ptr<LockerState>& s,
                                        const std::vector<SetMember>& members,
                                        const LockOptions& options);
LockSet lock_members(const std::shared_ptr<LockerState>& s, const std::vector<SetMember>& members,
                     const LockOptions& options);

}  // namespace sqlock::detail
