// The doctor's comparison of the database's clock with this host's, written
// once: a backend reads the database's clock inside one of its doctor's
// statements, timed by a ClockWindow, and these functions do the midpoint
// and word the fact and the problem the same way on every backend. Leases
// never use this host's clock; the difference only tells an operator why
// the times this host logs do not match the database's.
#pragma once

#include <chrono>
#include <string>

#include "sqlock/diagnosis.hpp"

namespace sqlock::detail {

/// The database's clock against this host's.
struct ClockDifference {
    double difference_ms = 0;   // database minus this host
    double uncertainty_ms = 0;  // half the round trip the reading was taken in
};

/// When a statement that reads the database's clock was sent and when its
/// answer came, by this host's wall clock.
class ClockWindow {
  public:
    using wall = std::chrono::system_clock;

    /// Opens the window: call just before the statement is sent.
    ClockWindow() : sent_(wall::now()) {}
    /// Closes it: call as soon as the answer is in.
    void answered() { answered_ = wall::now(); }
    /// The difference, given what the database's clock read (seconds since
    /// the Unix epoch, UTC): the reading is taken to be at the window's
    /// midpoint, good to half its width.
    ClockDifference against(double database_epoch_seconds) const;

  private:
    wall::time_point sent_;
    wall::time_point answered_ = sent_;
};

/// The fact "clock difference": "+12.3 ms (database minus this host, +/-
/// 0.4 ms)".
Diagnosis::Fact clock_fact(const ClockDifference& d);

/// The problem line when the clocks are more than two seconds apart, else
/// "".
std::string clock_problem(const ClockDifference& d);

}  // namespace sqlock::detail
