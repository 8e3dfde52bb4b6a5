#include "run/signals.hpp"

#include <cerrno>
#include <ctime>

namespace sqlock_cli {
namespace {

constexpr int forwardable[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

bool ignored(int signo) {
    struct sigaction current {};
    return sigaction(signo, nullptr, &current) == 0 && current.sa_handler == SIG_IGN;
}

timespec to_timespec(std::chrono::milliseconds d) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(d.count() / 1000);
    ts.tv_nsec = static_cast<long>((d.count() % 1000) * 1000000);
    return ts;
}

}  // namespace

SignalRelay::SignalRelay() {
    sigemptyset(&forwarded_);
    for (int s : forwardable)
        if (!ignored(s)) sigaddset(&forwarded_, s);
    // An inherited SIG_IGN for SIGCHLD would make the kernel reap the
    // command itself, and its exit status would be lost.
    if (ignored(SIGCHLD)) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGCHLD, &dfl, nullptr);
    }
    waited_ = forwarded_;
    sigaddset(&waited_, SIGCHLD);
    sigset_t blocked = waited_;
    // Blocked SIGPIPE: a write to a closed stderr fails with EPIPE instead of
    // killing sqlock while it holds the lock.
    if (!ignored(SIGPIPE)) sigaddset(&blocked, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &blocked, &original_mask_);
}

// The mask is deliberately not restored: sqlock exits right after, and
// unblocking would deliver what is still pending (a late SIGTERM, a SIGPIPE
// from a closed stderr) with its default action, killing sqlock after the
// command's status is known and turning that status into a signal death.
SignalRelay::~SignalRelay() = default;

std::optional<siginfo_t> SignalRelay::wait(std::chrono::milliseconds timeout) {
    siginfo_t info{};
    timespec ts = to_timespec(timeout);
    if (sigtimedwait(&waited_, &info, &ts) < 0) return std::nullopt;  // EAGAIN or EINTR
    return info;
}

int SignalRelay::take_pending() {
    siginfo_t info{};
    timespec zero{};
    int signo = sigtimedwait(&forwarded_, &info, &zero);
    return signo > 0 ? signo : 0;
}

bool from_terminal(const siginfo_t& info) noexcept {
#ifdef SI_KERNEL
    return info.si_code == SI_KERNEL;  // the tty driver sends with kernel privilege
#else
    (void)info;
    return false;
#endif
}

}  // namespace sqlock_cli
