// sqlock::Lock — a held lock: an RAII guard over one row of the lock table.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/options.hpp"
#include "sqlock/release_errors.hpp"

namespace sqlock {

struct GuardStatement;

namespace detail {
struct HeldClaim;
struct Access;
}  // namespace detail

/// Lock
///
/// Obtained from `Locker::lock()`, `try_lock()` or `acquire_slot()`. The
/// destructor releases the lock and never throws: a failed release is passed
/// to the release error handler (see `set_release_error_handler`). Call
/// `release()` to release early and see failures as exceptions; after that the
/// destructor does nothing.
///
/// Release and renew touch the row only while it is still this holder's (its
/// id *and* its `locked_by`, which carries a random owner token, match): a
/// stale handle can never release or extend somebody else's lock. A Lock
/// destroyed in a forked child leaves the parent's lock alone.
///
/// Thread safety: a Lock may be used from one thread at a time; its heartbeat
/// (if any) runs on its own thread and is synchronised internally.
///
///     sqlock::Locker locker("sqlite:///var/lib/app/locks.db");
///     if (auto lock = locker.try_lock("nightly-report")) {
///         run_report(lock->id());  // id() is a fencing token
///     }                            // released here
class Lock {
  public:
    Lock(Lock&&) noexcept;
    Lock& operator=(Lock&&) noexcept;
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;
    ~Lock();

    /// The name asked for (for a semaphore slot, without the slot suffix).
    const std::string& name() const;
    /// The row's `lockstring` ("name", or "name#N" for slot N).
    const std::string& lockstring() const;
    /// Semaphore slot number, 1-based; 0 for a plain lock.
    int slot() const;
    /// How the name is held: exclusive, or shared with other shared holders
    /// (then lockstring() is this holder's own row, "name#shared-...").
    lock_mode mode() const;
    /// Fencing token: the row id, strictly increasing and never reused within
    /// a table. Pass it to the resource you protect and have it reject
    /// requests carrying a smaller token than the largest it has seen.
    std::int64_t id() const;
    /// When the lock was taken, UTC text from the database clock.
    std::string created() const;
    /// When the lease ends, UTC text from the database clock (updated by renew).
    std::string expires() const;
    /// created() and expires() as time points (the database's clock).
    std::chrono::system_clock::time_point created_time() const;
    std::chrono::system_clock::time_point expires_time() const;
    /// The `locked_by` JSON stored in the row.
    const std::string& locked_by() const;
    /// The random owner token stored in `locked_by` ("guid").
    const std::string& owner_token() const;

    /// Until when the lock is certainly still held, by this process's
    /// monotonic clock: the moment the last successful renewal (or the
    /// acquisition) was sent, plus its lease. The database computed the
    /// row's `expires` from its own clock at a later moment, so no other
    /// holder can take the lock before this time as long as both clocks run
    /// at the same rate. Work protected by the lock must stop by then; with a
    /// heartbeat it moves forward with every renewal. Thread-safe.
    std::chrono::steady_clock::time_point valid_until() const;
    /// With a heartbeat: why its renewals have been failing (the error of
    /// the last attempt: the database read-only, unreachable, not answering
    /// in time), when the last one failed and none has succeeded since;
    /// else nullopt. Thread-safe.
    std::optional<error> renewal_failure() const;

    /// Extends the lease to `lease` from the database's now. Throws
    /// `errc::lost` if the row is no longer ours, `errc::invalid_argument` for
    /// a bad lease, or a connection/backend error.
    void renew(duration lease);
    /// Extends the lease by the length it was acquired with.
    void renew();

    /// Asks the database whether the row is still ours. False once lost.
    bool held() const;
    /// True once a heartbeat or an operation found the lock lost (no query).
    bool lost() const noexcept;

    /// Releases now. Throws `errc::lost` if the lock was no longer ours, or a
    /// connection/backend error; after such an error the handle stays and
    /// release() may be called again. A retry that finds the row gone says
    /// `lost`, also when an earlier attempt's delete went through and only
    /// its reply was lost (docs/semantics.md, "Threads"). A call after
    /// success or after `lost` is a no-op.
    void release();
    /// True until released (or moved from).
    bool active() const noexcept;

    /// The statement that guards a transaction with this lock (see
    /// sqlock::guard in transaction.hpp), for a driver sqlock has no adapter
    /// for. Throws errc::invalid_argument once released or moved from.
    GuardStatement guard_statement() const;

    /// Stops managing the lock without releasing it: the row stays until its
    /// lease runs out, or until `Locker::release(name, owner_token)` or
    /// `force_release`. For locks that must outlive the process (maintenance
    /// windows). Stops the heartbeat. Returns the row as last known.
    LockInfo detach();

  private:
    friend struct detail::Access;
    explicit Lock(std::shared_ptr<detail::HeldClaim> held);

    std::shared_ptr<detail::HeldClaim> held_;
};

}  // namespace sqlock
