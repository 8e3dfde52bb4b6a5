// What a guarded job (`sqlock run`, `sqlock elect`) is asked to do: the
// options the two commands share, and the settings the run engine reads.
// Each command adds its own options (run: --splay, --retry, --notify,
// --after...; elect: --value) in commands/.
#pragma once

#include <chrono>
#include <cxxopts.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/command_line.hpp"
#include "common/exit_codes.hpp"
#include "run/acquisition.hpp"
#include "sqlock/duration.hpp"

namespace date {
class time_zone;
}

namespace sqlock_cli {

/// The options `run` and `elect` share, in `group`: the lease, the wait,
/// the minimum hold, the heartbeat, fencing, the run's limits, the history,
/// the log format. Those of run alone, --slots, --shared and the --once-per
/// family, go in `run_only`: run's `group`; for elect a group its help does
/// not show, so that elect refuses them with its reason (a leader holds its
/// name alone) instead of as unknown options.
void add_job_options(cxxopts::Options& options, const std::string& group,
                     const std::string& run_only);

/// What `run` or `elect` was asked to do, from its options.
struct RunSettings {
    AcquireRequest request;
    bool terminate_on_lost = true;
    std::chrono::milliseconds grace{10000};
    std::chrono::milliseconds margin{200};
    /// --max-runtime: the job is stopped this long after it started.
    std::optional<std::chrono::milliseconds> max_runtime;
    int conflict_code = exit_code::busy;
    std::vector<std::string> command;
    std::string program;  ///< what the history, the row and the events call it (argv[0])
    bool history = true;
    std::optional<sqlock::duration> once_per;  ///< the window, with --once-per
    sqlock::duration once_per_offset{};
    bool once_per_any_outcome = false;
    /// --tz (or $SQLOCK_TZ): --once-per windows in this zone, from its local
    /// midnight (local_windows.hpp); null: UTC, from the epoch.
    const date::time_zone* tz = nullptr;
    /// --splay: wait a random time below this before asking for the lock.
    std::chrono::milliseconds splay{0};
    /// --retry: how many more attempts a job that failed by itself gets,
    /// the lock held throughout; --retry-delay, the first wait.
    int retries = 0;
    std::chrono::milliseconds retry_delay{10000};
    /// --notify: shell commands run at the job's start and end (notify.hpp).
    std::vector<std::string> notify;
    bool notify_output = false;  ///< --notify-output: a file with the output's tail
    bool notify_skips = false;   ///< --notify-skips: a `skip` event too
    std::chrono::milliseconds notify_timeout{10000};
    /// --after: the jobs whose last run must have succeeded, within
    /// --after-within (else since the --once-per window's start).
    std::vector<std::string> after;
    std::optional<sqlock::duration> after_within;
};

/// The job's options (add_job_options', and --tz) as settings; `command`
/// ("run", "elect") and its `usage` line for the messages. Throws
/// usage_error. The command adds what its own options say.
RunSettings parse_run_settings(const Invocation& inv, const std::string& command,
                               const std::string& usage);

}  // namespace sqlock_cli
