#include "supervisor.hpp"

#include <optional>

namespace sqlock_cli {

SuperviseResult supervise(ChildProcess& child, SignalRelay& signals, const std::atomic<bool>& lost,
                          const SupervisePolicy& policy, const std::function<void()>& on_lost) {
    using clock = std::chrono::steady_clock;
    // The heartbeat reports a loss from its own thread by setting `lost`;
    // polling it a few times a second keeps that thread free of signals.
    constexpr std::chrono::milliseconds tick{200};
    SuperviseResult result;
    std::optional<clock::time_point> kill_at;
    for (;;) {
        if (auto status = child.poll()) {
            result.status = *status;
            return result;
        }
        if (!result.lost && lost.load()) {
            result.lost = true;
            if (on_lost) on_lost();
            if (policy.terminate_on_lost) {
                child.signal(SIGTERM);
                kill_at = clock::now() + policy.kill_grace;
            }
        }
        if (kill_at && clock::now() >= *kill_at) {
            child.signal(SIGKILL);
            kill_at.reset();
        }
        auto info = signals.wait(tick);
        if (!info || info->si_signo == SIGCHLD) continue;  // collected at the top
        if (!from_terminal(*info)) child.signal(info->si_signo);
    }
}

}  // namespace sqlock_cli
