// What a wait waits through besides a holder: a database that is unavailable
// for now (error::unavailable(): it cannot be reached, does not answer, is
// starting up or shutting down, or is read-only during a failover or a
// switchover). The wait loop (wait_loop.hpp) keeps trying until its deadline,
// backing off between attempts; at the deadline it fails with the category
// of the last obstacle and a message saying what it waited through.
//
// The core knows no backend: a backend says "unavailable" through the error's
// category (errc::connection) or error::read_only_database().
#pragma once

#include <chrono>
#include <optional>
#include <random>
#include <string>

#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

/// Obstacles
///
/// The unavailable spells of one wait: when the current one began, what it
/// met (unreachable, read-only), the last error, and when to try next. Not
/// thread-safe (one waiting thread).
class Obstacles {
  public:
    using clock = std::chrono::steady_clock;

    /// The first retry after an obstacle comes after about `first` (with
    /// jitter), each next one twice as late, at most `cap` apart: a failover
    /// of a few seconds costs a waiter at most `cap` after it ends, and a
    /// fleet of waiters does not reconnect in step.
    explicit Obstacles(duration first = std::chrono::milliseconds(100),
                       duration cap = std::chrono::seconds(1));

    /// An attempt met `e` (e.unavailable()) at `now`.
    void met(const error& e, clock::time_point now);
    /// An attempt reached the database: the current spell is over.
    void cleared(clock::time_point now);

    /// Whether a spell is under way (the last attempt met an obstacle).
    bool blocked() const noexcept { return last_.has_value(); }
    /// When to attempt again (with jitter, growing; clock::time_point::min()
    /// when not blocked).
    clock::time_point retry_at() const noexcept { return retry_at_; }
    /// The last obstacle met.
    const error& last() const { return *last_; }

    /// How long the database has been unavailable in all, as of `now`.
    duration unavailable_for(clock::time_point now) const;

    /// The error a wait fails with when it stops during a spell: the last
    /// obstacle's category, code and read_only(), its message after what
    /// the wait for `subject` met and for how long (`waited` in all).
    /// `why`: "gave up" at the deadline, "stopped" by the progress hook.
    error give_up(const std::string& subject, duration waited, const std::string& why,
                  clock::time_point now) const;

  private:
    duration first_;
    duration cap_;
    duration backoff_;
    std::optional<error> last_;
    clock::time_point spell_since_{};
    duration before_spell_ = duration::zero();  // unavailable in earlier spells
    bool unreachable_seen_ = false;
    bool read_only_seen_ = false;
    clock::time_point retry_at_ = clock::time_point::min();
    std::optional<std::mt19937> jitter_;
};

}  // namespace sqlock::detail
