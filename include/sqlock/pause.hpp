// Pausing a job: a row beside the lock table that tells `sqlock run` (and
// any program that asks Pauses::find()) not to run it, on any host, for
// as long as an operator needs (maintenance, an incident) without editing
// every host's schedule.
#pragma once

#include <optional>
#include <string>

namespace sqlock {

/// PauseInfo
///
/// One pause, as read back from the pauses table (`<table>_pauses`). Times
/// are UTC text "YYYY-MM-DD HH:MM:SS.mmm" from the database's clock. A pause
/// whose `until` has passed has ended: it is never returned by
/// Pauses::find() or Pauses::all(), and the reaper may delete it.
struct PauseInfo {
    std::string name{};                  ///< the job's lock name (not "name#N")
    std::string paused_by{};             ///< "user@host" of who paused it
    std::string reason{};                ///< free text, may be empty
    std::string created{};               ///< when it was paused
    std::optional<std::string> until{};  ///< when it ends by itself; none: until resumed
};

}  // namespace sqlock
