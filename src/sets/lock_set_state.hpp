// The state behind a LockSet handle: one owner, one row per name, one
// heartbeat for all of them.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "lock/heartbeat.hpp"
#include "sqlock/options.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

struct LockSetState {
    std::shared_ptr<LockerState> locker;
    std::vector<std::string> names;  // distinct, bytewise order
    Claim claim;                     // the set as held: claim.entries[i] is names[i]'s
    std::vector<std::int64_t> ids;   // ids[i] is claim.entries[i].row()'s id
    std::string locked_by;
    std::string token;
    duration lease{};
    duration min_hold{};
    pid_t pid = 0;  // the process that acquired; a forked child must not release
    lost_handler on_lost;
    Validity validity;
    mutable std::mutex mutex;  // guards expires against the heartbeat
    std::string expires;       // the earliest of the rows'
    std::atomic<bool> released{false};
    std::atomic<bool> lost{false};
    std::unique_ptr<Heartbeat> heartbeat;

    // For the Locker's observer (sqlock/observer.hpp): when the acquisition
    // was sent, and the renewals that failed in a row since the last one
    // that succeeded.
    std::chrono::steady_clock::time_point acquired_at{};
    std::atomic<int> failed_renewals{0};
    bool handed_out = false;  // set before the heartbeat starts: told of from then on

    /// Renews every row as one (one statement, or one transaction with the
    /// markers of the names held shared). True when all were renewed (and
    /// `expires` is the earliest of theirs), false when any is not ours any
    /// more (then on_lost names the first of those). Throws on failure.
    bool renew_rows(duration lease, Heartbeat::clock::time_point deadline);
    /// Marks the set lost and calls on_lost once, for `name`, and tells
    /// the observer. Never throws.
    void mark_lost(const std::string& name, std::int64_t id) noexcept;
    /// The set's names and ids, for the observer's events.
    SetEventNames event_names() const noexcept { return {names, ids}; }
    /// Releases every row together; throws errc::lost naming those that
    /// were not ours, or the failure.
    void release_rows();
    /// "set of N locks ('a', 'b', ...)", for messages.
    std::string describe() const;
    ~LockSetState();
};

}  // namespace sqlock::detail
