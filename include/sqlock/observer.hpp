// sqlock::LockObserver — a hook for embedders' metrics and tracing: told of
// every acquisition, renewal, release and loss of a Locker's locks.
#pragma once

#include <cstdint>
#include <string>

#include "sqlock/duration.hpp"

namespace sqlock {

/// What an acquisition came to.
enum class acquire_outcome {
    acquired,  ///< the lock is held
    busy,      ///< held by another, and the caller did not wait (try_lock, a zero wait)
    timeout,   ///< the wait ran out
    failed,    ///< an error: the database unreachable, a bad option...
};

/// "acquired", "busy", "timeout", "failed".
const char* to_string(acquire_outcome outcome) noexcept;

/// One acquisition: Locker::try_lock, lock, try_acquire_slot,
/// acquire_slot, campaign (a re-entrant nested hold is not one).
struct AcquireEvent {
    const std::string& name;  ///< the name asked for (a semaphore's without "#N")
    std::int64_t fencing_id;  ///< the lock row's id when acquired, else 0
    acquire_outcome outcome;
    duration waited;  ///< from the call to its end (0 for a single try)
    int attempts;     ///< claims sent to the database
};

/// One renewal that succeeded: by the heartbeat, or Lock::renew().
struct RenewEvent {
    const std::string& name;
    std::int64_t fencing_id;
    duration latency;  ///< from sending the renewal to its answer
    /// It came after failed attempts (no answer in time, connection lost,
    /// database busy): later than planned.
    bool late;
    int failed_attempts;  ///< in a row, before this one
};

/// One release that succeeded (the row deleted, or kept by a minimum hold).
struct ReleaseEvent {
    const std::string& name;
    std::int64_t fencing_id;
    duration held;  ///< from the acquisition's sending to the release
};

/// A held lock found lost: taken over, force-released, or its lease ran
/// out unrenewed (by the heartbeat, Lock::held(), renew() or release()).
struct LossEvent {
    const std::string& name;
    std::int64_t fencing_id;
};

/// LockObserver
///
/// Set one on a Locker (LockerOptions::observer) to be told of what happens
/// to every single-name lock it hands out: plain locks, semaphore slots,
/// shared holds and leaders (lock sets are not reported). Override what you
/// need; every member has an empty default.
///
/// Called outside sqlock's own locks and connections, on the thread that
/// did the work: the caller's for acquisitions, releases and explicit
/// renewals, a heartbeat thread for its renewals and the losses it finds.
/// So calls come from several threads at once: an observer must be
/// thread-safe, and should return promptly (a slow one delays that lock's
/// next renewal, never the others'). An exception it throws is caught and
/// dropped: it never reaches sqlock or the caller. The event's references
/// are valid only during the call. With no observer set, sqlock does no
/// work for it: one null check per event, no allocation, no clock read.
///
///     struct Timings : sqlock::LockObserver {
///         void on_acquire(const sqlock::AcquireEvent& e) override {
///             wait_seconds.observe(std::chrono::duration<double>(e.waited).count());
///         }
///     };
///     sqlock::LockerOptions options;
///     options.observer = std::make_shared<Timings>();
///     sqlock::Locker locker(url, options);
///
/// docs/examples/observer_histogram.cpp feeds Prometheus-style histograms.
class LockObserver {
  public:
    virtual ~LockObserver() = default;
    virtual void on_acquire(const AcquireEvent& event);
    virtual void on_renew(const RenewEvent& event);
    virtual void on_release(const ReleaseEvent& event);
    virtual void on_loss(const LossEvent& event);
};

}  // namespace sqlock
