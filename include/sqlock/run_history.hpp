// Run history: a record of every job run under a lock, and the "once per
// window" decision built on it: a job scheduled on several hosts runs once
// per window, and monitoring can tell when it last succeeded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/duration.hpp"
#include "sqlock/run_records.hpp"

namespace sqlock {

class Locker;
class Lock;

namespace detail {
struct LockerState;
}

/// RunHistory
///
/// The cron ledger of a Locker's lock table: the record of every job run
/// under a lock, in a table `<table>_runs` beside it (created by init()
/// like it), and what is decided from it: once per window, after other
/// jobs, and how a job stands for monitoring. A light handle over the
/// Locker's session, as etcd's Election stands on a Session: it shares the
/// Locker's connections and may outlive it, as a Lock may. Every time is
/// the database's. Its calls throw errc::configuration when the table is
/// missing (a table made before sqlock had a history: run init() once),
/// and as any Locker operation does.
///
/// Thread safety: as its Locker's: any number of threads may share one, and
/// a copy costs one shared pointer.
///
///     sqlock::RunHistory history(locker);
///     sqlock::Lock lock = locker.lock("nightly-report");
///     if (!history.once_per_window(lock, std::chrono::hours(24)).done) {
///         const std::int64_t run = history.start_run(lock);
///         sqlock::RunEnd end;
///         end.outcome = run_report() ? sqlock::run_outcome::succeeded
///                                    : sqlock::run_outcome::failed;
///         history.finish_run(lock, run, end);
///     }
class RunHistory {
  public:
    /// The history of `locker`'s lock table. Connects nothing yet. Throws
    /// errc::invalid_argument for a moved-from Locker.
    explicit RunHistory(const Locker& locker);

    /// The once-per window of `length`, shifted by `offset`, that holds the
    /// database's now (UTC, aligned on the Unix epoch: 1d is a UTC day), and
    /// whether it is done for `lock`'s name: a run recorded for this window
    /// succeeded (with `any_outcome`, one ended in any way, lost included).
    /// Decide while holding `lock` and record the run's end before
    /// releasing it (finish_run): then two holders can never both run one
    /// window, whatever their clocks. Throws errc::invalid_argument for a
    /// window that is not positive or over 366 days, an offset that is
    /// negative or not shorter than the window, or a released Lock or one
    /// from another Locker's table.
    OncePerWindow once_per_window(const Lock& lock, duration length,
                                  duration offset = duration::zero(), bool any_outcome = false);

    /// Draws the window of a once-per decision around the database's now:
    /// [start, end) in milliseconds since the Unix epoch.
    using window_rule = std::function<std::pair<std::int64_t, std::int64_t>(std::int64_t now_ms)>;
    /// As above, with the window `rule` draws around the database's now:
    /// windows that are not a fixed length from the epoch, such as days in
    /// a time zone (`sqlock run --tz`), still judged by the database's
    /// clock. Throws errc::invalid_argument when the window it draws does
    /// not hold now or is longer than 366 days, and as above.
    OncePerWindow once_per_window(const Lock& lock, const window_rule& rule,
                                  bool any_outcome = false);

    /// Records that a run starts under `lock` (outcome running); returns
    /// the run's id for finish_run(). Empty fields of `info` are this
    /// process's (host, pid, user, program).
    std::int64_t start_run(const Lock& lock, RunStart info = {});

    /// Reads the pause in force for `lock`'s name and, only when there is
    /// none, records that a run starts under `lock` as start_run() does, in
    /// one round trip (see RunStartOutcome). Without a pauses table (a lock
    /// table made before sqlock had pauses) nothing is paused, as
    /// Pauses::find() says, and the run is recorded. Throws
    /// errc::configuration when the history table is missing (run init() or
    /// `sqlock init`), errc::invalid_argument for a released Lock or one
    /// from another Locker's table, and as any other operation does.
    RunStartOutcome start_run_unless_paused(const Lock& lock, RunStart info = {});

    /// Records how run `run_id` ended, before `lock` is released. Returns
    /// what was recorded: `end.outcome`, or `lost` when the lock was no
    /// longer held at that moment (its lease ran out, it was taken over or
    /// force-released). A run whose end was recorded already (by an earlier
    /// call, or by this one's first try when its answer was lost) keeps it,
    /// and that end is returned while the lock row is still this Lock's;
    /// `lost` when it is not (the reaper recorded it lost, or the row is
    /// gone or another holder's). A failure throws: the end may or may not
    /// have been recorded; calling again says which.
    run_outcome finish_run(const Lock& lock, std::int64_t run_id, const RunEnd& end);

    /// Records that the job of `lock`'s name was not run, as a run that
    /// started and ended now with `outcome`, which must be a skip
    /// (after_failed, after_pending; see is_skip()); returns its id. Empty
    /// fields of `info` are this process's, as for start_run(). Throws
    /// errc::invalid_argument for another outcome, a released Lock or one
    /// from another Locker's table, and as start_run() does.
    std::int64_t record_skip(const Lock& lock, run_outcome outcome, RunStart info = {});

    /// Draws the cutoff of a predecessors() look from the database's now
    /// (ms since the Unix epoch): a success must have ended at or after it.
    using since_rule = std::function<std::int64_t(std::int64_t now_ms)>;
    /// How the jobs `names` stand for a job that runs after them (`sqlock
    /// run --after`), in one look at the history judged by the database's
    /// clock: each job's newest run that ran decides (see
    /// predecessor_state); a success counts when it ended within `within`
    /// of now. Throws errc::invalid_argument for no names, a bad name or a
    /// `within` that is not positive or over 366 days.
    Predecessors predecessors(const std::vector<std::string>& names, duration within);
    /// As above, a success counting when it ended at or after the cutoff
    /// `rule` draws (a once-per window's start, say).
    Predecessors predecessors(const std::vector<std::string>& names, const since_rule& rule);

    /// Recorded runs, newest first (see HistoryQuery).
    std::vector<RunRecord> runs(const HistoryQuery& query = {});

    /// What monitoring asks about job `name` (see JobStatus): its newest
    /// success however long ago, its newest finished run and a running one
    /// among the newest few, and the database's now. A few rows are read
    /// whatever the size of the history.
    JobStatus job_status(const std::string& name);

    /// Runs in the history by name and outcome, counted by the database (one
    /// aggregate query), ordered by name: for `sqlock metrics`.
    std::vector<RunCount> run_counts();

    /// Deletes runs started more than `retention` ago in batches of
    /// `batch_size` (each its own short transaction, paced so acquirers get
    /// at least half of the time); returns how many. Never deletes a run
    /// still going on under a live lock. 0 when there is no history table.
    std::size_t prune(duration retention, std::size_t batch_size = 500);

    /// How many runs prune(retention) would delete now, counted by the
    /// database; nothing is deleted. 0 when there is no history table.
    std::size_t count_prunable(duration retention);

  private:
    std::shared_ptr<detail::LockerState> state_;
};

}  // namespace sqlock
