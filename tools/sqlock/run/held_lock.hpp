// What `sqlock run` holds while its job runs: one lock (a name, or a slot
// of a semaphore), a leadership (`sqlock elect`: a lock with a value), or a
// set of names taken all at once. One face for all, so that the run's
// phases (run_session.hpp) are written once.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/locker.hpp"

namespace sqlock_cli {

class HeldLock {
  public:
    explicit HeldLock(sqlock::Lock lock) : own_(std::move(lock)), lock_(&*own_) {}
    explicit HeldLock(sqlock::Leadership lead) : lead_(std::move(lead)), lock_(&lead_->lock()) {}
    explicit HeldLock(sqlock::LockSet set) : set_(std::move(set)) {}
    // lock_ points into this object.
    HeldLock(const HeldLock&) = delete;
    HeldLock& operator=(const HeldLock&) = delete;

    /// The single lock; null for a set (the run history records single
    /// locks only).
    const sqlock::Lock* single() const noexcept { return lock_; }

    /// "lock "x" (id 5)", or "lock set "a" (id 5), "b" (id 6)".
    std::string describe() const;
    /// The lock's fencing id; a set's first name's.
    std::int64_t id() const;
    /// The rows' names: the lockstring, or the set's names.
    std::vector<std::string> lockstrings() const;
    std::string expires() const;
    std::chrono::steady_clock::time_point valid_until() const;
    /// As Lock::renewal_failure().
    std::optional<sqlock::error> renewal_failure() const;
    void renew();
    /// Throws as Lock::release() and LockSet::release() do.
    void release();
    bool active() const noexcept;
    void detach();
    /// The job's SQLOCK_* variables: SQLOCK_NAME, SQLOCK_LOCKSTRING,
    /// SQLOCK_SLOT and SQLOCK_ID of the lock (of a set: its first name),
    /// SQLOCK_LOCKS, a JSON object of every row's name and fencing id, and
    /// SQLOCK_GUARD, guard_sql().
    std::vector<std::string> environment() const;

    /// The SQL that guards the job's own transaction on the lock's database
    /// with this hold (sqlock::guard): one statement, or one per name of a
    /// set, joined by "; ", with the values written in.
    std::string guard_sql() const;

  private:
    std::optional<sqlock::Lock> own_;
    std::optional<sqlock::Leadership> lead_;
    sqlock::Lock* lock_ = nullptr;  // own_'s, lead_'s, or none for a set
    std::optional<sqlock::LockSet> set_;
};

}  // namespace sqlock_cli
