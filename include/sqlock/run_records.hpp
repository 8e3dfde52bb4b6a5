// The run history's records: how a run ended, a run as read back, what
// starting and ending one records, once-per windows, predecessors and a
// job's status. Value types only: RunHistory (run_history.hpp) reads and
// writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"
#include "sqlock/pause.hpp"

namespace sqlock {

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

}  // namespace sqlock
