// Pauses: the pauses of a Locker's jobs, read and written over its session
// (the records are PauseInfo, pause.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"
#include "sqlock/pause.hpp"

namespace sqlock {

class Locker;

namespace detail {
struct LockerState;
}

/// Pauses
///
/// The pauses of a Locker's lock table, in a table `<table>_pauses` beside
/// it (created by init() like it): a job's name paused on every host until
/// resumed, or for a while by the database's clock. A pause does not touch
/// a lock that is held: a running job goes on; the next `sqlock run` (or
/// RunHistory::start_run_unless_paused()) sees it. A light handle over the
/// Locker's session, as RunHistory is: it shares the Locker's connections
/// and may outlive it. Times are the database's, UTC. A table made before
/// sqlock had pauses has none: reading finds nothing paused, so `run` keeps
/// working on old deployments; pausing there is errc::configuration (run
/// init()).
///
/// Thread safety: as its Locker's: any number of threads may share one, and
/// a copy costs one shared pointer.
///
///     sqlock::Pauses pauses(locker);
///     pauses.pause("nightly-report", std::chrono::hours(2), "disk replacement");
///     if (auto p = pauses.find("nightly-report")) std::cout << p->paused_by << '\n';
///     pauses.resume("nightly-report");
class Pauses {
  public:
    /// The pauses of `locker`'s lock table. Connects nothing yet. Throws
    /// errc::invalid_argument for a moved-from Locker.
    explicit Pauses(const Locker& locker);

    /// Pauses job `name` on every host: find() reports it until resume(),
    /// or until `for_` has passed on the database's clock when given.
    /// Pausing a paused name replaces its pause (who, why, until). Returns
    /// the pause as stored. Throws errc::invalid_argument for a bad name, a
    /// `for_` that is not positive or over 366 days, or a reason over 1024
    /// bytes or not UTF-8; errc::configuration when the pauses table is
    /// missing (run init()).
    PauseInfo pause(const std::string& name, std::optional<duration> for_ = std::nullopt,
                    const std::string& reason = "");

    /// Ends the pause of `name`; returns whether there was one in force
    /// (an expired one is deleted too, and counts as none). Throws as
    /// pause() does.
    bool resume(const std::string& name);

    /// The pause of `name` in force now, if any; nullopt without a pauses
    /// table.
    std::optional<PauseInfo> find(const std::string& name);

    /// Every pause in force now, by name; empty without a pauses table.
    std::vector<PauseInfo> all();

    /// Deletes the pauses that have ended by themselves (their `until` has
    /// passed on the database's clock; they are ignored everywhere already)
    /// in batches of `batch_size`, paced as Locker::purge_expired() is;
    /// returns how many. A pause renewed meanwhile stays. Safe with any
    /// number of reapers at once: each row is deleted by one. 0 without a
    /// pauses table.
    std::size_t purge_expired(std::size_t batch_size = 500);

    /// How many pauses purge_expired() would delete now, counted by the
    /// database; nothing is deleted. 0 without a pauses table.
    std::size_t count_expired();

  private:
    std::shared_ptr<detail::LockerState> state_;
};

}  // namespace sqlock
