#include "run/supervisor.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "run/process_tree.hpp"

namespace sqlock_cli {
namespace {

using clock = SupervisePolicy::clock;
using std::chrono::milliseconds;

// After SIGKILL, how long to wait for the job's processes to be collected
// before leaving (a process stuck in uninterruptible sleep cannot die).
constexpr milliseconds reap_limit{3000};

}  // namespace

SuperviseResult supervise(ChildProcess& child, SignalRelay& signals, const std::atomic<bool>& lost,
                          const SupervisePolicy& policy, const SuperviseEvents& events) {
    // The heartbeat reports from its own threads through `lost` and
    // valid_until(); polling them keeps those threads free of signals. The
    // turn is short so that SIGKILL goes out close to its deadline.
    constexpr milliseconds tick{50};
    SuperviseResult result;
    bool command_done = false;
    bool termed = false;
    bool announced = false;
    std::optional<clock::time_point> killed_at;
    // SIGKILL `grace` after a loss or the deadline stopped the job.
    std::optional<clock::time_point> stop_kill_at;
    auto signal_all = [&](int signo) { signal_job(signo, child.pid() > 0 ? child.pid() : -1); };
    // SIGTERM once (whatever asked first), SIGKILL at the earliest kill time asked for.
    auto stop = [&](clock::time_point now) {
        if (!termed) signal_all(SIGTERM);
        termed = true;
        const auto at = now + policy.grace;
        stop_kill_at = stop_kill_at ? std::min(*stop_kill_at, at) : at;
    };
    for (;;) {
        // Collect whatever ended: the command, or a process it left behind
        // that was re-parented to us (we are its subreaper).
        bool no_children = false;
        for (;;) {
            int status = 0;
            pid_t pid = ::waitpid(-1, &status, WNOHANG);
            if (pid > 0) {
                if (pid == child.pid()) {
                    child.collected();
                    result.status = status;
                    command_done = true;
                }
                continue;
            }
            if (pid < 0 && errno == EINTR) continue;
            no_children = pid < 0;  // ECHILD: the whole job has ended
            break;
        }
        if (command_done && no_children) return result;
        if (command_done && !announced) {
            // Said once, when the command ends but its descendants run on.
            announced = true;
            auto left = static_cast<int>(descendants().size());
            if (left > 0 && events.waiting_for) events.waiting_for(left);
        }

        const auto now = clock::now();
        if (killed_at && now - *killed_at >= reap_limit) {
            result.leftovers = true;
            return result;
        }
        if (!result.lost && lost.load()) {
            result.lost = true;
            if (events.lost) events.lost();
            if (policy.terminate_on_lost && !killed_at) stop(now);
        }
        // Not when the job is already being stopped (lost, fenced): it ends
        // as that says. With --on-lost=ignore a lost lock stops nothing, so
        // the deadline still does.
        if (policy.deadline && !termed && !killed_at && now >= *policy.deadline) {
            result.timed_out = true;
            if (events.timed_out) events.timed_out();
            stop(now);
        }
        std::optional<clock::time_point> kill_at = stop_kill_at;
        if (policy.fence && !killed_at) {
            const auto valid_until = policy.valid_until();
            const auto fence_kill = valid_until - policy.margin;
            // Not after a loss: that is its own report. After the deadline,
            // the job has had its SIGTERM; fencing only brings SIGKILL nearer.
            if (!result.fenced && !result.lost && now >= fence_kill - policy.grace) {
                result.fenced = true;
                if (events.fencing) events.fencing();
                if (!termed) signal_all(SIGTERM);
                termed = true;
            }
            if (termed) kill_at = kill_at ? std::min(*kill_at, fence_kill) : fence_kill;
        }
        if (kill_at && !killed_at && now >= *kill_at) {
            killed_at = now;
            kill_at.reset();
        }
        // Once killing, every turn: a process forked meanwhile is reached too.
        if (killed_at) signal_all(SIGKILL);

        auto wait = tick;
        if (policy.fence && !termed) {
            auto until = policy.valid_until() - policy.margin - policy.grace - now;
            wait = std::min(
                wait, std::max(std::chrono::duration_cast<milliseconds>(until), milliseconds(1)));
        }
        if (policy.deadline && !termed) {
            wait = std::min(
                wait, std::max(std::chrono::duration_cast<milliseconds>(*policy.deadline - now),
                               milliseconds(1)));
        }
        if (kill_at) {
            wait = std::min(wait, std::max(std::chrono::duration_cast<milliseconds>(*kill_at - now),
                                           milliseconds(1)));
        }
        auto info = signals.wait(wait);
        if (!info || info->si_signo == SIGCHLD) continue;  // collected at the top
        result.signalled = true;
        // To the command, and to what is left of branches whose parent has
        // ended; a process whose parent lives is that parent's to handle (a
        // shell forwards to its children as it sees fit).
        if (!from_terminal(*info)) signal_children(info->si_signo);
    }
}

}  // namespace sqlock_cli
