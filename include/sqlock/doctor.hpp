// sqlock::diagnose(): what `sqlock doctor` finds out about the way from a
// Locker to its database.
#pragma once

#include "sqlock/diagnosis.hpp"

namespace sqlock {

class Locker;

/// Probes the database of `locker` the way `sqlock doctor` reports it:
/// server version, primary or standby, a pooler in transaction mode,
/// whether waiters are woken by notifications or poll, the clock
/// difference, the table and its grants. Read-only; opens its own
/// short-lived connections (never the Locker's pool) and takes a few
/// seconds at most. Throws `errc::connection` if the database cannot be
/// reached at all, errc::invalid_argument for a moved-from Locker;
/// everything else is reported in the result. Thread-safe.
///
///     for (const auto& f : sqlock::diagnose(locker).facts)
///         std::cout << f.key << ": " << f.value << '\n';
Diagnosis diagnose(const Locker& locker);

}  // namespace sqlock
