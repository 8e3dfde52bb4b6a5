// The one wait of every acquisition: a lock, a semaphore slot, a shared
// hold, a lock set, a leader's campaign (a lock) and a transaction-scoped
// lock. It owns the deadline, the place in the name's line (wait_queue.hpp),
// the wake-ups (pushed releases through the ReleaseHub, else polling on the
// backend's schedule with jitter), the safety net against a missed push,
// the progress hook, the busy and timeout errors, and the wait through a
// database that is unavailable for now (obstacle.hpp). What it waits for is
// a Claimant: one attempt at a time, and the words for what was in the way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/claim.hpp"
#include "sqlock/lock_info.hpp"
#include "sqlock/options.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// What a failed attempt found.
struct Refusal {
    std::vector<Row> holders;   // the rows in the way, when known
    bool queued = false;        // waiters ahead went first
    bool queue_exists = false;  // the table has a queue of waiters
    bool left_line = false;     // on success: the attempt also left our place in line
    bool lapsed = false;        // taken, but its lease ran out before it was confirmed

    /// The first row in the way, as the caller sees it.
    std::optional<LockInfo> first_holder() const;
};

/// One kind of acquisition, as the wait loop drives it.
class Claimant {
  public:
    virtual ~Claimant() = default;
    /// The names whose releases wake it.
    virtual const std::vector<std::string>& names() const = 0;
    /// Whether it waits with a place in its one name's line. A set takes
    /// none (set_acquirer.cpp says why): it lets every waiter go first.
    virtual bool takes_place() const = 0;
    /// Who it is in the line (the owner string its place is held by).
    virtual const std::string& locked_by() const = 0;
    /// What it waits for, for the messages: "lock 'x'".
    virtual std::string subject() const = 0;
    /// One attempt, letting the live waiters queued before ticket `before`
    /// go first (INT64_MAX: every one). True when taken (the claimant keeps
    /// what it took); else `refusal` says what was in the way.
    virtual bool attempt(std::int64_t before, Refusal& refusal) = 0;
    /// Taken, then its place left in a round trip of its own (which a link
    /// that freezes can stretch): whether what it took is still vouched
    /// for. False: it lapsed; the claimant lets go of it and keeps its
    /// owner for the next attempt.
    virtual bool vouched_after_leaving() { return true; }
    /// Whether releases pushed by the backend (ReleaseHub) wake it; else
    /// it only polls (and releases made in this process still wake it).
    virtual bool wakes_by_push() const { return true; }
    /// Whether an attempt that met an unavailable database (obstacle.hpp)
    /// may be tried again until the deadline. Not in a caller's own
    /// transaction: a broken link or a read-only server has ended it.
    virtual bool waits_through_obstacles() const { return true; }
    /// An attempt met an obstacle: whether it took what it asked for before
    /// its answer was lost is not known, and the next attempt must find out.
    virtual void attempt_in_doubt() {}
    /// Why it was refused: the start of the busy and timeout messages.
    virtual std::string refused_text(const Refusal& refusal) const = 0;
    /// The start of the timeout message (refused_text() unless said otherwise).
    virtual std::string timeout_text(const Refusal& refusal) const { return refused_text(refusal); }
};

/// Attempts `claimant` until it is taken (returns), or as `o` says stops:
/// at once when `o` does not wait (errc::busy), at its deadline or when
/// its progress hook says so (errc::timeout). The errors carry the first
/// row in the way and end with the database's redacted URL. An attempt
/// that meets an unavailable database (error::unavailable()) is tried again,
/// backing off, until the deadline; then the call fails with that error's
/// category, saying what it waited through (Obstacles::give_up). Without a
/// wait, that error is thrown at once. An attempt that throws errc::busy (a
/// lost race the database broke off: a serialization failure, a deadlock,
/// a lock wait timeout) is a refusal like any other while waiting.
void wait_for(LockerState& s, Claimant& claimant, const LockOptions& o);

}  // namespace sqlock::detail
