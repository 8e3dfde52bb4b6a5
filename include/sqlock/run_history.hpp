// Run history: a record of every job run under a lock, and the "once per
// window" decision built on it: a job scheduled on several hosts runs once
// per window, and monitoring can tell when it last succeeded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sqlock/duration.hpp"
#include "sqlock/pause.hpp"

namespace sqlock {

class Locker;
class Lock;

namespace detail {
struct LockerState;
}

/// How a run ended. `running` while its holder is alive; `lost` when the
/// holder's lease ran out before it recorded an end (it died, hung, or its
/// lock was taken over or force-released), or when its lock was no longer
/// held at the moment it recorded its end; `timed_out` when its holder
/// stopped it for running longer than it was allowed (`sqlock run
/// --max-runtime`), whatever its status then was. The skips did not run the
/// job at all (RunHistory::record_skip, `sqlock run --after`): `after_failed`
/// when a job it runs after did not succeed last, `after_pending` when one
/// is still running or has no success recent enough yet. Stored as the text
/// to_string() gives; a stored text this library does not know (a newer
/// version's outcome) reads as `lost`, and run_counts() leaves it out.
enum class run_outcome {
    running,
    succeeded,
    failed,
    killed,
    lost,
    timed_out,
    after_failed,
    after_pending
};

/// Every run_outcome, in the enum's order.
inline constexpr run_outcome all_run_outcomes[] = {
    run_outcome::running,      run_outcome::succeeded,    run_outcome::failed,
    run_outcome::killed,       run_outcome::lost,         run_outcome::timed_out,
    run_outcome::after_failed, run_outcome::after_pending};

/// True for the skips (after_failed, after_pending): records of a job that
/// was not run. Monitoring's "last run" and once-per windows pass over them.
constexpr bool is_skip(run_outcome outcome) noexcept {
    return outcome == run_outcome::after_failed || outcome == run_outcome::after_pending;
}

/// "running", "succeeded", "failed", "killed", "lost", "timed_out",
/// "after_failed", "after_pending".
const char* to_string(run_outcome outcome) noexcept;
/// The inverse of to_string(); nullopt for anything else.
std::optional<run_outcome> parse_run_outcome(const std::string& text) noexcept;

/// RunRecord
///
/// One row of the history table (`<table>_runs`), as read back. Times are
/// UTC text "YYYY-MM-DD HH:MM:SS.mmm" from the database's clock.
///
/// `outcome` is derived at read time for a run still marked running whose
/// lock row (the row with id `fencing_id`) is gone or expired: it reads
/// `lost`, with `ended` the lease's end when the expired row is still there
/// (or the reaper recorded it when it deleted the row), else unknown.
struct RunRecord {
    std::int64_t id = 0;                        ///< the run's own id, increasing
    std::string name{};                         ///< the lock name (not "name#N")
    std::optional<std::string> window_start{};  ///< start of its once-per window
    std::string host{};
    std::int64_t pid = 0;
    std::string user{};
    std::string program{};
    std::int64_t fencing_id = 0;  ///< the lock row's id (Lock::id())
    std::string started{};
    std::optional<std::string> ended{};
    run_outcome outcome = run_outcome::running;
    std::optional<int> exit_status{};  ///< the job's exit status, when it exited
    std::optional<int> signal{};       ///< the signal that ended it, when one did
    /// ended - started, in seconds (to the millisecond); for a running job,
    /// now - started; unknown when `ended` is.
    std::optional<double> duration_seconds{};
    /// Its place among the runs of one hold of the lock, from 1: a job run
    /// again under the same lock (`sqlock run --retry`) is recorded as one
    /// run per attempt, all with the lock's fencing id.
    int attempt = 1;
};

/// What RunHistory::start_run() records besides what the Lock says (name, fencing id).
/// Empty fields are filled in from this process (host name, pid, user).
struct RunStart {
    std::string program{};  ///< what is run (argv[0]; arguments may hold secrets)
    std::string host{};
    std::int64_t pid = 0;
    std::string user{};
    /// The once-per window this run is for (OncePerWindow::start_ms), if any.
    std::optional<std::int64_t> window_start_ms{};
};

/// RunStartOutcome
///
/// What RunHistory::start_run_unless_paused() did: it read the pause in force
/// for the lock's name and, only when there was none, recorded the start of
/// a run, in one round trip (one statement on PostgreSQL, one batch on
/// MariaDB, one transaction on SQLite). Exactly one of the two is set: the
/// run's id, or the pause that kept the run from starting (no run was
/// recorded). A pause made a moment later does not stop a run already
/// recorded; it applies from the next start.
///
///     sqlock::RunHistory history(locker);
///     sqlock::Lock lock = locker.lock("nightly-report");
///     sqlock::RunStartOutcome start = history.start_run_unless_paused(lock);
///     if (start.pause) {
///         std::cerr << "paused by " << start.pause->paused_by << "\n";
///         return;  // releasing the lock, nothing recorded
///     }
///     sqlock::RunEnd end;
///     end.exit_status = run_the_job();
///     end.outcome = *end.exit_status == 0 ? sqlock::run_outcome::succeeded
///                                         : sqlock::run_outcome::failed;
///     history.finish_run(lock, *start.run_id, end);
struct RunStartOutcome {
    /// The run recorded (for finish_run()), when the name was not paused.
    std::optional<std::int64_t> run_id{};
    /// The pause in force, when there was one: no run was recorded.
    std::optional<PauseInfo> pause{};
};

/// How a run ended, for finish_run(). `outcome` must not be `running`.
struct RunEnd {
    run_outcome outcome = run_outcome::succeeded;
    std::optional<int> exit_status{};
    std::optional<int> signal{};
};

/// OncePerWindow
///
/// A window of `length` on the database's clock, in UTC, aligned on the Unix
/// epoch and shifted by `offset`: with length 1d and offset 3h, every window
/// starts at 03:00 UTC. `done` says whether a run of the name in this window
/// already counts (see RunHistory::once_per_window).
struct OncePerWindow {
    std::string start{};        ///< UTC text, inclusive
    std::string end{};          ///< UTC text, exclusive
    std::int64_t start_ms = 0;  ///< start, milliseconds since the Unix epoch
    std::int64_t end_ms = 0;
    bool done = false;
    /// The run that makes it done, when it is.
    std::optional<RunRecord> done_by{};
};

/// How a job that another one runs after stands (RunHistory::predecessors()).
enum class predecessor_state {
    /// Its newest run succeeded and ended at or after the cutoff.
    succeeded,
    /// Its newest run is still running.
    running,
    /// Its newest run ended without success (failed, killed, lost,
    /// timed out), however long ago.
    failed,
    /// No run is recorded, or its newest success ended before the cutoff.
    missing,
};

/// "succeeded", "running", "failed", "missing".
const char* to_string(predecessor_state state) noexcept;

/// Predecessor
///
/// One job that another runs after, as the history says: its state, and
/// the run that decides it (its newest run that ran, skips passed over),
/// when there is one.
struct Predecessor {
    std::string name{};
    predecessor_state state = predecessor_state::missing;
    std::optional<RunRecord> run{};
};

/// Predecessors
///
/// What RunHistory::predecessors() read, in one look at the history, judged by
/// the database's clock: the cutoff a success must have ended at or after,
/// and each job in the order asked.
struct Predecessors {
    std::int64_t now_ms = 0;    ///< the database's now, ms since the Unix epoch
    std::int64_t since_ms = 0;  ///< the cutoff, ms since the Unix epoch
    std::string since{};        ///< the same, UTC text
    std::vector<Predecessor> jobs{};
    /// True when every job succeeded after the cutoff.
    bool satisfied() const noexcept {
        for (const auto& j : jobs)
            if (j.state != predecessor_state::succeeded) return false;
        return true;
    }
};

/// How many of a name's newest runs RunHistory::job_status() looks through for
/// `running` and `last_finished`.
constexpr std::size_t job_status_recent_runs = 10;

/// JobStatus
///
/// One job's state for monitoring (RunHistory::job_status, `sqlock check`,
/// `sqlock metrics`). `last_finished` and `running` are found among the
/// name's newest job_status_recent_runs runs that ran (skips passed over); `last_success` is the
/// newest succeeded run of all. Ages are by the database's clock.
struct JobStatus {
    std::string name{};
    std::int64_t now_ms = 0;  ///< the database's now, ms since the Unix epoch
    std::string now{};        ///< the same, UTC text
    std::optional<RunRecord> last_success{};
    /// The last success's end, ms since the Unix epoch, when there is one.
    std::optional<std::int64_t> last_success_end_ms{};
    /// now - the last success's end, in seconds, when there is one.
    std::optional<double> success_age_seconds{};
    /// The newest run that is no longer running (any outcome).
    std::optional<RunRecord> last_finished{};
    /// The newest run still running, if any.
    std::optional<RunRecord> running{};
    /// The newest skip (after_failed, after_pending), when it is newer than
    /// every run that ran: the job has been skipped since.
    std::optional<RunRecord> skipped{};
};

/// How many runs of `name` the history holds with `outcome` (derived as
/// runs() derives it: a dead holder's run counts as lost).
/// RunHistory::run_counts().
struct RunCount {
    std::string name{};
    run_outcome outcome = run_outcome::running;
    std::int64_t count = 0;
};

/// What RunHistory::runs() reads.
struct HistoryQuery {
    std::string name{};       ///< one lock name, or empty for all
    duration since{};         ///< only runs started within this (0: all)
    std::size_t limit = 100;  ///< at most this many, newest first
};

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
    /// force-released), or when the run was no longer marked running (the
    /// reaper had recorded it lost, or its end was recorded already).
    /// A failure throws: the end is then not recorded, and the run reads
    /// as lost once its lease has run out.
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
