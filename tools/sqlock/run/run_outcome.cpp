#include "run/run_outcome.hpp"

#include <sys/wait.h>

#include <algorithm>

#include "common/exit_codes.hpp"
#include "run/supervisor.hpp"

namespace sqlock_cli {

int exit_status(const RunOutcome& o) noexcept {
    if (o.fenced) return exit_code::lost;
    if (o.lost() && o.terminate_on_lost) return exit_code::lost;
    if (o.timed_out) return exit_code::timed_out;
    const int code = exit_code_for_status(o.wait_status);
    if (o.record_failure && code == 0) return o.record_failure;
    if (o.release_failure && code == 0) return o.release_failure;
    return code;
}

int exit_code_for_status(int status) noexcept {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return exit_code::signal_base + WTERMSIG(status);
    return exit_code::internal;
}

sqlock::RunEnd run_end(const SuperviseResult& result) {
    sqlock::RunEnd end;
    if (result.lost || result.fenced) {
        end.outcome = sqlock::run_outcome::lost;
    } else if (result.timed_out) {
        end.outcome = sqlock::run_outcome::timed_out;
    } else if (WIFEXITED(result.status)) {
        end.outcome = WEXITSTATUS(result.status) == 0 ? sqlock::run_outcome::succeeded
                                                      : sqlock::run_outcome::failed;
    } else if (WIFSIGNALED(result.status)) {
        end.outcome = sqlock::run_outcome::killed;
    } else {
        end.outcome = sqlock::run_outcome::failed;
    }
    if (WIFEXITED(result.status)) end.exit_status = WEXITSTATUS(result.status);
    if (WIFSIGNALED(result.status)) end.signal = WTERMSIG(result.status);
    return end;
}

bool retryable(const SuperviseResult& result) noexcept {
    if (result.lost || result.fenced || result.timed_out || result.signalled || result.leftovers)
        return false;
    return !(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0);
}

std::chrono::milliseconds retry_backoff(std::chrono::milliseconds base, int failed,
                                        double jitter) noexcept {
    const std::chrono::milliseconds cap =
        std::max<std::chrono::milliseconds>(base, std::chrono::minutes(10));
    std::chrono::milliseconds d = base;
    for (int i = 1; i < failed && d < cap; ++i) d *= 2;
    d = std::min(d, cap);
    jitter = std::clamp(jitter, 0.0, 1.0);
    return std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(d.count()) * (1.0 - jitter / 2)));
}

}  // namespace sqlock_cli
