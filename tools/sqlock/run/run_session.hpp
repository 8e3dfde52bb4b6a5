// `sqlock run` as a session of phases, in this order:
//   acquire    take the lock (or skip: busy, timeout, interrupted);
//   gate       what decides whether the job starts under it: a signal that
//              came while waiting, a lease renewed before starting, the
//              pause, the --once-per window, the start of the run record;
//   supervise  start the job and watch it until it and its processes end;
//   finish     record the end in the run history, release the lock.
// A way out before the job runs releases the lock in one place
// (RunSession::leave_early). The exit status after the job ran is
// run_outcome.hpp's pure function; what it was asked to do, run_settings.hpp.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.hpp"
#include "common/event_log.hpp"
#include "common/exit_codes.hpp"
#include "run/acquisition.hpp"
#include "run/child_process.hpp"
#include "run/held_lock.hpp"
#include "run/output_tail.hpp"
#include "run/run_outcome.hpp"
#include "run/run_settings.hpp"
#include "run/signals.hpp"
#include "run/supervisor.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/pauses.hpp"
#include "sqlock/run_history.hpp"

namespace sqlock_cli {

/// This host's name, printable.
std::string this_host();

/// A guarded job from start to exit status: the JSON log's context, the
/// release error handler, the settings from `parse` (called within, so
/// that its usage errors are events too) and the RunSession.
int run_guarded(Invocation& inv, const std::function<RunSettings(const Invocation&)>& parse);

/// RunSession
///
/// One `sqlock run`: run() goes through the phases and returns the exit code,
/// or throws cli_error for a way out that is not the job's (skipped, an
/// error; its event already written in JSON, see EventLog::ending). The
/// library's errors that no phase turns into its own message are thrown as
/// they are. Not thread-safe; one per process (it blocks signals, see
/// SignalRelay).
///
///     RunSession session(inv, settings, log);
///     return session.run();
class RunSession {
  public:
    /// Blocks the forwarded signals, then opens the database (connects
    /// nothing yet). Throws for a bad URL or table.
    RunSession(Invocation& inv, RunSettings& settings, EventLog& log);
    RunSession(const RunSession&) = delete;
    RunSession& operator=(const RunSession&) = delete;

    int run();

  private:
    struct EarlyExit;

    int run_phases();
    void splay();
    void notify(const std::string& event, int code);
    void acquire();
    void take();
    void retake(const EarlyExit& why);
    EarlyExit not_started(const sqlock::error& e, const std::string& context) const;
    std::optional<EarlyExit> gate();
    std::optional<EarlyExit> admit();
    std::optional<EarlyExit> check_pause();
    EarlyExit paused(const sqlock::PauseInfo& pause) const;
    sqlock::RunStart run_start() const;
    void said_recording() const;
    std::optional<EarlyExit> decide_window();
    void decide_window_now();
    /// --wait's deadline, from when the lock was asked for.
    std::chrono::steady_clock::time_point wait_deadline() const {
        return s_.request.wait_forever ? std::chrono::steady_clock::time_point::max()
                                       : asked_ + s_.request.wait;
    }
    /// How long the steps before the job wait through an unavailable
    /// database: until the wait's deadline, while the lease lasts.
    std::function<std::chrono::steady_clock::time_point()> before_start() const {
        return [this] { return std::min(wait_deadline(), lock_->valid_until()); };
    }
    /// How long the steps after the job (its record, the release) do:
    /// while the lease lasts.
    std::function<std::chrono::steady_clock::time_point()> while_leased() const {
        return [this] { return lock_->valid_until(); };
    }
    std::optional<EarlyExit> decide_after();
    sqlock::Predecessors read_predecessors();
    EarlyExit after_skip(const sqlock::Predecessors& p);
    std::string local_window_text() const;
    std::optional<EarlyExit> start();
    std::optional<EarlyExit> spawn_job();
    SuperviseResult supervise();
    bool retry(SuperviseResult& result);
    bool await_retry(std::chrono::milliseconds delay);
    int finish(const SuperviseResult& result);
    void record_end(const sqlock::RunEnd& end, RunOutcome& outcome, std::string& record_error);
    void release_at_end(const sqlock::RunEnd& end, RunOutcome& outcome, std::string& record_error);
    bool lapsed_unavailable(const sqlock::error& e,
                            std::chrono::steady_clock::time_point lease_end) const;
    int leave_early(const EarlyExit& exit);
    std::string lost_on() const;

    Invocation& inv_;
    RunSettings& s_;
    EventLog& log_;
    // Before the Locker: the library's threads must inherit the blocked mask.
    SignalRelay signals_;
    sqlock::Locker locker_;
    sqlock::RunHistory history_{locker_};
    sqlock::Pauses pauses_{locker_};
    std::string db_;    // " at <database>", for the messages
    std::string path_;  // the command's executable, resolved before the lock is taken
    std::shared_ptr<std::atomic<bool>> lost_ = std::make_shared<std::atomic<bool>>(false);
    std::optional<HeldLock> lock_;
    std::string what_;  // "lock "name" (id N)": a released lock no longer answers
    std::int64_t lock_id_ = 0;
    std::string job_;  // the command's name in quotes, for the messages
    std::optional<sqlock::OncePerWindow> window_;
    std::optional<std::int64_t> run_id_;
    std::optional<ChildProcess> child_;
    std::chrono::steady_clock::time_point asked_{};          // when the lock was asked for
    std::chrono::steady_clock::time_point first_started_{};  // of the first attempt
    std::chrono::steady_clock::time_point started_{};        // of this attempt
    std::chrono::steady_clock::time_point ended_{};
    int attempt_ = 1;  // --retry: this attempt's number
    // --notify: why this host did not run the job ("busy", "paused"...),
    // whether the start was notified (then the end is), how the job ended.
    std::string skip_reason_;
    bool start_notified_ = false;
    std::string outcome_ = "failed";
    std::optional<OutputTail> tail_;  // --notify-output
};

}  // namespace sqlock_cli
