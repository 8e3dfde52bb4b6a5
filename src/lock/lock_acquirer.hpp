// Acquisition of one name: a plain lock, a shared hold or a semaphore slot.
// One attempt is one claim (claim.hpp) sent to the backend; waiting is the
// wait loop's (wait_loop.hpp), with a place in the name's line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/owner.hpp"
#include "held/held_claim.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/options.hpp"
#include "waiting/wait_loop.hpp"

namespace sqlock::detail {

/// The most slots a semaphore has.
constexpr int max_capacity = 10000;

/// What one acquisition is: a plain lock, a shared hold or a semaphore slot.
struct Target {
    std::string name;  // as asked for; also the ReleaseHub key waiters wait on
    int capacity = 0;  // 0: plain lock
    bool shared = false;
};

/// What an acquisition that threw came to, for an observer.
acquire_outcome observed_outcome(const error& e) noexcept;

/// Locker::try_lock() and lock(): `name` as `options` say (a nested hold
/// when this thread holds it here and `reentrant` allows; errc::busy when
/// it does not). Campaigns take their lock the same way.
std::optional<Lock> try_lock_name(const std::shared_ptr<LockerState>& s, const std::string& name,
                                  const LockOptions& options);
Lock lock_name(const std::shared_ptr<LockerState>& s, const std::string& name,
               const LockOptions& options);
/// Locker::try_acquire_slot() and acquire_slot().
std::optional<Lock> try_acquire_slot(const std::shared_ptr<LockerState>& s, const std::string& name,
                                     int capacity, const LockOptions& options);
Lock acquire_slot(const std::shared_ptr<LockerState>& s, const std::string& name, int capacity,
                  const LockOptions& options);

class Acquirer {
  public:
    explicit Acquirer(std::shared_ptr<LockerState> state) : s_(std::move(state)) {}

    void ensure_initialized() { detail::ensure_initialized(*s_); }

    /// Re-entrancy: the same thread asking again for a lock it holds
    /// through this Locker would wait on itself. Returns a nested hold when
    /// allowed; throws errc::busy when not.
    std::shared_ptr<HeldClaim> check_reentry(const Target& t, const LockOptions& o);

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

    std::shared_ptr<LockerState> s_;
};

}  // namespace sqlock::detail
