// What `sqlock run` holds while its job runs: one lock (a name, or a slot
// of a semaphore) or a set of names taken all at once. One face for both,
// so that the run's phases (run_session.hpp) are written once.
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
    explicit HeldLock(sqlock::Lock lock) : lock_(std::move(lock)) {}
    explicit HeldLock(sqlock::LockSet set) : set_(std::move(set)) {}

    /// The single lock; null for a set (the run history records single
    /// locks only).
    const sqlock::Lock* single() const noexcept { return lock_ ? &*lock_ : nullptr; }

    /// "lock "x" (id 5)", or "lock set "a" (id 5), "b" (id 6)".
    std::string describe() const;
    /// The lock's fencing id; a set's first name's.
    std::int64_t id() const;
    /// The rows' names: the lockstring, or the set's names.
    std::vector<std::string> lockstrings() const;
    std::string expires() const;
    std::chrono::steady_clock::time_point valid_until() const;
    void renew();
    /// Throws as Lock::release() and LockSet::release() do.
    void release();
    bool active() const noexcept;
    void detach();
    /// The job's SQLOCK_* variables: SQLOCK_NAME, SQLOCK_LOCKSTRING,
    /// SQLOCK_SLOT and SQLOCK_ID of the lock (of a set: its first name),
    /// and SQLOCK_LOCKS, a JSON object of every row's name and fencing id.
    std::vector<std::string> environment() const;

  private:
    std::optional<sqlock::Lock> lock_;
    std::optional<sqlock::LockSet> set_;
};

}  // namespace sqlock_cli
