// sqlock::LockObserver — a hook for embedders' metrics and tracing: told of
// every acquisition, renewal, release and loss of a Locker's locks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// The lock set an event is about: a set is told of once per acquisition,
/// renewal, release or loss, as one lock is, with all its names here.
struct SetEventNames {
    /// Every name of the set, each once, in bytewise order (LockSet::names()).
    const std::vector<std::string>& names;
    /// names[i]'s fencing id (LockSet::ids()); empty for an acquisition
    /// that did not acquire.
    const std::vector<std::int64_t>& fencing_ids;
};

/// One acquisition: Locker::try_lock, lock, try_acquire_slot,
/// acquire_slot, campaign (a re-entrant nested hold is not one), and of a
/// set: try_lock_all, lock_all, try_lock_members, lock_members.
struct AcquireEvent {
    /// The name asked for (a semaphore's without "#N"); a set's first name.
    const std::string& name;
    /// The lock row's id when acquired (a set's: its first name's), else 0.
    std::int64_t fencing_id;
    acquire_outcome outcome;
    duration waited;  ///< from the call to its end (0 for a single try)
    int attempts;     ///< claims sent to the database (a set's: each claims all its names)
    const SetEventNames* set = nullptr;  ///< a set's names and ids; null for one lock
};

/// One renewal that succeeded: by the heartbeat, or Lock::renew() (a set's:
/// every row in one, LockSet::renew()).
struct RenewEvent {
    const std::string& name;  ///< a set's: its first name
    std::int64_t fencing_id;  ///< a set's: its first name's
    duration latency;         ///< from sending the renewal to its answer
    /// It came after failed attempts (no answer in time, connection lost,
    /// database busy): later than planned.
    bool late;
    int failed_attempts;                 ///< in a row, before this one
    const SetEventNames* set = nullptr;  ///< a set's names and ids; null for one lock
};

/// One release that succeeded (the row deleted, or kept by a minimum hold;
/// a set's: all its rows).
struct ReleaseEvent {
    const std::string& name;             ///< a set's: its first name
    std::int64_t fencing_id;             ///< a set's: its first name's
    duration held;                       ///< from the acquisition's sending to the release
    const SetEventNames* set = nullptr;  ///< a set's names and ids; null for one lock
};

/// A held lock found lost: taken over, force-released, or its lease ran
/// out unrenewed (by the heartbeat, Lock::held(), renew() or release()).
/// A set is lost with any of its rows, and told of once.
struct LossEvent {
    /// The name found lost: of a set, the first of its rows found not ours
    /// (its first name when a release found some, which it does not tell).
    const std::string& name;
    std::int64_t fencing_id;             ///< that name's
    const SetEventNames* set = nullptr;  ///< a set's names and ids; null for one lock
};

/// LockObserver
///
/// Set one on a Locker (LockerOptions::observer) to be told of what happens
/// to every lock it hands out: plain locks, semaphore slots, shared holds,
/// leaders, and lock sets, each set once per event with all its names and
/// fencing ids (`event.set`; null for a single-name lock), since a set is
/// taken, renewed and released in one claim. Override what you need; every
/// member has an empty default.
///
/// Called outside sqlock's own locks and connections, on the thread that
/// did the work: the caller's for acquisitions, releases and explicit
/// renewals, a heartbeat thread for its renewals and the losses it finds.
/// So calls come from several threads at once: an observer must be
/// thread-safe, and should return promptly (a slow one delays that lock's
/// next renewal, never the others'). An exception it throws is caught and
/// dropped: it never reaches sqlock or the caller. The event's references
/// (and `set`'s) are valid only during the call. An observer that counts
/// per name finds all of a set's names in `set`. With no observer set, sqlock does no
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
