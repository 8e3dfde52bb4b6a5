// What happened to one `sqlock run` after its job ended, and the exit status
// that follows from it. Pure: no process, no database, so that every
// precedence between the job's status, a lost or fenced lock and a failed
// record or release is unit-tested (tests/cli/run_outcome_test.cpp).
#pragma once

#include <chrono>

#include "sqlock/run_history.hpp"

namespace sqlock_cli {

struct SuperviseResult;

/// RunOutcome
///
/// How a run that started its job ended, as run_session.cpp learns it: the
/// supervisor's result, then the recording of the end, then the release.
/// Failures are sqlock's exit codes for them (exit_code_for), 0 for none.
struct RunOutcome {
    int wait_status = 0;              ///< the job's wait status (waitpid)
    bool fenced = false;              ///< stopped because the lease could not be renewed
    bool timed_out = false;           ///< stopped at its --max-runtime
    bool lost_while_running = false;  ///< the heartbeat found the lock lost
    bool lost_at_record = false;      ///< the end was recorded `lost`: the lease had run out
    bool lost_at_release = false;     ///< the release found the lock no longer ours
    int record_failure = 0;           ///< recording the end in the run history failed
    int release_failure = 0;          ///< the release failed (other than lost)
    bool terminate_on_lost = true;    ///< --on-lost=term (false: ignore)

    /// Lost in any of the three ways.
    bool lost() const noexcept { return lost_while_running || lost_at_record || lost_at_release; }
};

/// The exit status of a run that started its job, first that applies:
///   1. fenced: 79 (the job was stopped; nothing was recorded or released);
///   2. lost, with --on-lost=term: 79;
///   3. timed out (--max-runtime): 124, as timeout(1) exits, whatever the
///      job's status after its SIGTERM (0 included) and over a failed
///      record or release (those are said in their own lines);
///   4. the job's own status when it is not 0 (a failed job keeps its code
///      over a failed record or release): exit_code_for_status();
///   5. the failed record's code, then 6. the failed release's code;
///   7. 0.
/// A lost or fenced lock wins over a timeout: the lock is gone, and that is
/// what a caller must not miss. With --on-lost=ignore a lost lock leaves 3-7
/// as they are.
int exit_status(const RunOutcome& outcome) noexcept;

/// sqlock's exit code for a wait status: the exit status, or 128+N for a
/// command killed by signal N (as shells report it), else 70.
int exit_code_for_status(int status) noexcept;

/// How the job ended, for the run history: `lost` when the lock was lost or
/// fenced while it ran, else `timed_out` when it was stopped at its
/// --max-runtime, else by its wait status (succeeded, failed, killed); its
/// exit status or signal in every case.
sqlock::RunEnd run_end(const SuperviseResult& result);

/// Whether `run --retry` runs the job again after this attempt: it failed
/// (exited non-zero, or a signal killed it) by itself. Not when sqlock
/// stopped it (a lost or fenced lock, --max-runtime), when a signal was
/// forwarded to it (someone asked it to stop), nor when some of its
/// processes would not die.
bool retryable(const SuperviseResult& result) noexcept;

/// The wait before the next attempt after `failed` attempts (1 or more):
/// `base` doubled for each failure after the first, capped at the larger
/// of `base` and 10 minutes, then jittered down by up to half by `jitter`
/// (in [0, 1): a random draw), so that jobs that failed together do not
/// retry together.
std::chrono::milliseconds retry_backoff(std::chrono::milliseconds base, int failed,
                                        double jitter) noexcept;

}  // namespace sqlock_cli
