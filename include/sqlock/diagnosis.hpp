// Diagnosis — what sqlock::diagnose() (doctor.hpp) finds out about the way to
// the database.
#pragma once

#include <string>
#include <vector>

namespace sqlock {

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

}  // namespace sqlock
