#include "workers.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "clock.hpp"
#include "interrupt.hpp"

namespace sqlock_bench {

std::int64_t StartLine::arrive_and_wait() {
    ready.fetch_add(1);
    std::int64_t start;
    // Short sleeps, not a spin: on a small machine spinning workers would
    // steal the CPU from the ones still connecting.
    while ((start = start_ns.load()) == 0) sleep_ns(100'000);
    const std::int64_t left = start - now_ns();
    if (left > 0) sleep_ns(left);
    return start;
}

Workers::Workers(int count, const std::function<void(int)>& body) {
    std::fflush(nullptr);  // buffered output must not be written twice
    for (int i = 0; i < count; ++i) {
        pid_t pid = fork();
        if (pid < 0) {
            abandon();
            throw std::runtime_error("fork failed");
        }
        if (pid == 0) {
            reset_interrupt_handlers();
            int code = 0;
            try {
                body(i);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "sqlock-bench: worker %d: %s\n", i, e.what());
                code = 1;
            } catch (...) {
                std::fprintf(stderr, "sqlock-bench: worker %d: unknown failure\n", i);
                code = 1;
            }
            std::fflush(nullptr);
            _exit(code);
        }
        pids_.push_back(pid);
        status_.push_back(-1);
    }
}

Workers::~Workers() {
    abandon();
}

void Workers::abandon() noexcept {
    for (std::size_t i = 0; i < pids_.size(); ++i)
        if (status_[i] == -1) kill(pids_[i], SIGKILL);
    reap(true);
}

void Workers::reap(bool block) noexcept {
    for (std::size_t i = 0; i < pids_.size(); ++i) {
        if (status_[i] != -1) continue;
        int st = 0;
        pid_t r;
        do {
            r = waitpid(pids_[i], &st, block ? 0 : WNOHANG);
        } while (r < 0 && errno == EINTR);
        if (r == pids_[i]) status_[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0) status_[i] = 255;
    }
}

void Workers::start_together(StartLine& line, double delay_ms) {
    const std::int64_t give_up = now_ns() + ms_to_ns(120'000);
    while (line.ready.load() < static_cast<int>(pids_.size())) {
        reap(false);
        for (int s : status_)
            if (s != -1) throw std::runtime_error("a worker exited before the start (see above)");
        if (now_ns() > give_up) throw std::runtime_error("workers did not get ready in 120 s");
        check_interrupted();
        sleep_ns(200'000);
    }
    line.start_ns.store(now_ns() + ms_to_ns(delay_ms));
}

void Workers::join() {
    reap(true);
    int failed = 0;
    for (int s : status_)
        if (s != 0) ++failed;
    check_interrupted();
    if (failed)
        throw std::runtime_error(std::to_string(failed) + " of " + std::to_string(pids_.size()) +
                                 " worker processes failed (see above)");
}

}  // namespace sqlock_bench
