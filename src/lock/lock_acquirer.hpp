// Acquisition of one name: a plain lock, a shared hold or a semaphore slot.
// One attempt is one claim (claim.hpp) sent to the backend; waiting is the
// wait loop's (wait_loop.hpp), with a place in the name's line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/owner.hpp"
#include "lock/lock_state.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/options.hpp"
#include "waiting/wait_loop.hpp"

namespace sqlock::detail {

/// What one acquisition is: a plain lock, a shared hold or a semaphore slot.
struct Target {
    std::string name;  // as asked for; also the ReleaseHub key waiters wait on
    int capacity = 0;  // 0: plain lock
    bool shared = false;
};

/// What an acquisition that threw came to, for an observer.
acquire_outcome observed_outcome(const error& e) noexcept;

class Acquirer {
  public:
    explicit Acquirer(std::shared_ptr<LockerState> state) : s_(std::move(state)) {}

    void ensure_initialized() { detail::ensure_initialized(*s_); }

    /// Re-entrancy: the same thread asking again for a lock it holds
    /// through this Locker would wait on itself. Returns a nested hold when
    /// allowed; throws errc::busy when not.
    std::shared_ptr<LockState> check_reentry(const Target& t, const LockOptions& o);

    /// One attempt as `owner`, letting the live waiters queued before
    /// ticket `before` go first (INT64_MAX: all of them, as a caller that
    /// does not wait does); a waiting caller keeps one owner for all its
    /// attempts. On success the lock takes `owner`'s strings; otherwise it
    /// is left as it was, for the next attempt. `in_doubt`: an earlier
    /// attempt as `owner` may have taken a slot before its answer was lost.
    std::optional<Lock> attempt_once(const Target& t, const LockOptions& o, Owner& owner,
                                     Refusal* refusal, std::int64_t before = INT64_MAX,
                                     bool in_doubt = false);

    /// Attempts until taken, as `o` says (wait_for()).
    Lock acquire(const Target& t, const LockOptions& o);

    /// One attempt by a caller that does not wait (try_lock,
    /// try_acquire_slot): nullopt when the name is taken.
    std::optional<Lock> try_once(const Target& t, const LockOptions& o);

  private:
    class Waiting;

    static std::optional<std::pair<int, Row>> own_slot(Connection& c, const Target& t,
                                                       const Owner& owner);
    bool still_vouched(LockState& st, const LockOptions& o);
    bool refresh(LockState& st);
    void give_heartbeat(LockState& st, const LockOptions& o);

    std::shared_ptr<LockerState> s_;
};

}  // namespace sqlock::detail
