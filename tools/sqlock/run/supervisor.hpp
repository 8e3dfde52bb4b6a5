// Watching the job while the lock is held: forward signals, stop the job in
// time when the lock can no longer be vouched for (self-fencing), notice a
// lost lock, and collect the command and every process it left behind.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include "run/child_process.hpp"
#include "run/signals.hpp"

namespace sqlock_cli {

struct SupervisePolicy {
    using clock = std::chrono::steady_clock;
    /// On a lost lock: SIGTERM the job, then SIGKILL after `grace`.
    bool terminate_on_lost = true;
    /// Self-fencing: SIGTERM the job at valid_until - grace - margin and
    /// SIGKILL it at valid_until - margin, so it has ended before another
    /// holder can start. valid_until() is read afresh on every turn: a
    /// renewal that succeeds in time moves the deadlines away.
    bool fence = false;
    std::chrono::milliseconds grace{10000};
    std::chrono::milliseconds margin{0};
    std::function<clock::time_point()> valid_until;
    /// --max-runtime: at this point the whole job gets SIGTERM, and SIGKILL
    /// `grace` later, whatever the lease says. None: no limit.
    std::optional<clock::time_point> deadline;
};

/// What the supervisor tells its caller (each called at most once).
struct SuperviseEvents {
    std::function<void()> lost;            ///< the heartbeat declared the lock lost
    std::function<void()> fencing;         ///< self-fencing started (SIGTERM sent, or due)
    std::function<void()> timed_out;       ///< the deadline came: stopping the job (SIGTERM sent)
    std::function<void(int)> waiting_for;  ///< the command ended; N processes it left still run
};

struct SuperviseResult {
    int status = 0;          ///< the command's wait status
    bool lost = false;       ///< the lock was reported lost while the job ran
    bool fenced = false;     ///< the job was stopped because the lease could not be renewed
    bool timed_out = false;  ///< the job was stopped at policy.deadline
    bool leftovers = false;  ///< processes of the job were still alive when we gave up waiting
    /// A forwardable signal came while the job ran (from the terminal too):
    /// someone asked the job to stop, and a failure after it is not retried.
    bool signalled = false;
};

/// Runs until the command and every descendant (see process_tree.hpp) have
/// ended and been collected: the lock is held for the whole job. Forwards
/// each forwardable signal sent to sqlock alone (not the terminal's, which
/// the process group got itself; see signals.hpp) to the command and to
/// every process left behind by a parent that ended (signal_children). When `lost` turns true (set
/// by the heartbeat's on_lost) and `policy.terminate_on_lost`, when self-fencing is due, or when
/// `policy.deadline` has come, the whole job is signalled; the first of these sends SIGTERM, and
/// SIGKILL follows at the earliest of their kill times. Self-fencing that falls due while the job
/// is already being stopped for its deadline still counts (`fenced`): the lease could not be
/// vouched for. Once the job has been sent SIGKILL, at most a few seconds more are spent
/// collecting it.
SuperviseResult supervise(ChildProcess& child, SignalRelay& signals, const std::atomic<bool>& lost,
                          const SupervisePolicy& policy, const SuperviseEvents& events);

}  // namespace sqlock_cli
