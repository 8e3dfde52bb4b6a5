// The queue of waiters: callers that wait for a name are served in the order
// they started to wait.
//
// A waiter joins `<table>_queue` with a row of its own (its ticket: the row's
// id, drawn in arrival order), renews the row while it waits, and leaves
// when it stops waiting: it got the name, gave up, or failed. Every
// acquisition passes a QueueGate (backend.hpp): it takes the name only while
// no live waiter with a smaller ticket is queued, so the first in line gets
// it next, and a caller that does not wait never takes it from under the
// line. A waiter that dies leaves the line when its row's lease runs out.
//
// Wake-ups follow the line: only the first in line watches the name (on
// PostgreSQL, it alone is notified of a release); the others wait for the
// one ahead of them to leave (notified to their inbox, or polled at a pace
// set by their place in line).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "base/validate.hpp"
#include "sqlock/duration.hpp"

namespace sqlock::detail {

struct LockerState;

/// The lease of a waiter's place: `queue_lease` when set, else the lock's
/// own lease (`expires`) within [min_queue_lease, default_queue_lease_cap],
/// so that a waiter that stops answering at the head of the line stalls a
/// free name no longer than a holder that stops answering would.
inline duration queue_lease_for(duration queue_lease, duration expires) {
    if (queue_lease > duration::zero()) return queue_lease;
    return std::min(std::max(expires, min_queue_lease), default_queue_lease_cap);
}

/// A place in the queue of waiters for one name, held for as long as the
/// object lives. Joining and renewing throw sqlock::error; leaving never does
/// (a row left behind leaves the line when its lease runs out).
class QueuePlace {
  public:
    using clock = std::chrono::steady_clock;

    /// Joins the line for `name` (a lock's name, a semaphore's without
    /// "#N") as `waiter` (its locked_by), woken through `inbox` ("" for
    /// none), the row expiring `lease` after each renewal.
    QueuePlace(LockerState& s, std::string name, std::string waiter, std::string inbox,
               duration lease);
    ~QueuePlace() { leave(); }
    QueuePlace(const QueuePlace&) = delete;
    QueuePlace& operator=(const QueuePlace&) = delete;

    std::int64_t ticket() const noexcept { return ticket_; }

    /// Renews the place and counts the live waiters ahead of it. False when
    /// the place was lost (its lease ran out while this process could not
    /// renew it): the caller joins again, at the end of the line.
    bool poll();
    /// Live waiters ahead when it joined or last polled.
    std::int64_t ahead() const noexcept { return ahead_; }
    /// How fast the line moves, in places a second, as this place has seen
    /// it (0 until it has moved between two looks).
    double pace_seen() const noexcept { return per_second_; }
    /// An attempt found nobody ahead: this place is first now.
    void moved_to_front() noexcept { ahead_ = 0; }
    /// How long the line should take to bring this place to the front: at
    /// the speed seen, or 10 ms a place until it has been seen to move.
    duration front_in() const noexcept;
    /// When the place must be renewed next: a third of the lease after the
    /// last renewal, so that two renewals may fail before it lapses.
    clock::time_point renew_due() const noexcept { return renewed_ + lease_ / 3; }
    /// When the first place ahead lapses unless its waiter renews it (as
    /// of the join or the last look; max() when nobody was ahead): a
    /// waiter ahead that died or was cut off is gone from the line then,
    /// and nothing else may tell the ones behind.
    clock::time_point ahead_lapses() const noexcept { return ahead_lapses_; }

    /// Leaves the line (at most once); the waiter right behind is woken.
    void leave() noexcept;
    /// The place was left by the statement that took the name
    /// (AcquireResult::left_line): nothing is left to do.
    void forget() noexcept { left_ = true; }

  private:
    LockerState& s_;
    std::string name_;
    std::string waiter_;
    duration lease_;
    std::int64_t ticket_ = 0;
    std::int64_t ahead_ = 0;
    clock::time_point renewed_;
    clock::time_point ahead_lapses_ = clock::time_point::max();
    double per_second_ = 0;
    bool moving_ = false;  // the last look saw the line move
    bool left_ = false;
};

/// How long a waiter `ahead` places from the front of the line sleeps before
/// it looks again, when nothing pushes it a wake-up: a part of the time the
/// line will take to bring it to the front, at `per_second` places a second
/// as seen so far (0: not seen yet), so that it looks a few times in all,
/// however long the line; never longer than `renew` (its place is renewed
/// by the same look).
duration poll_pace(std::int64_t ahead, double per_second, duration renew);

}  // namespace sqlock::detail
