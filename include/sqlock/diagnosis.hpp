// Diagnosis — what sqlock::diagnose() finds out about the way to the database.
#pragma once

#include <string>
#include <vector>

namespace sqlock {

class Locker;

/// Diagnosis
///
/// The facts a user needs to know which path their locks take (server
/// version, primary or standby, pooler, how waiters are woken, clock
/// difference), in display order, and one line for each problem found, with
/// what to do about it. `problems` is empty when the setup looks right.
///
///   for (const auto& f : sqlock::diagnose(locker).facts) std::cout << f.key << ": " << f.value;
struct Diagnosis {
    struct Fact {
        std::string key;    ///< "server version", "wake-ups", ...
        std::string value;  ///< "15.4", "pushed (LISTEN/NOTIFY, checked)", ...
    };
    std::vector<Fact> facts;
    std::vector<std::string> problems;
};

/// Probes the database of `locker` the way `sqlock doctor` reports it:
/// server version, primary or standby, a pooler in transaction mode,
/// whether waiters are woken by notifications or poll, the clock
/// difference, the table and its grants. Read-only; opens its own
/// short-lived connections (never the Locker's pool) and takes a few
/// seconds at most. Throws `errc::connection` if the database cannot be
/// reached at all, errc::invalid_argument for a moved-from Locker;
/// everything else is reported in the result. Thread-safe.
Diagnosis diagnose(const Locker& locker);

}  // namespace sqlock
