#include "current_pid.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace sqlock::detail {
namespace {

std::atomic<pid_t> cached{0};

void forget() noexcept {
    cached.store(0, std::memory_order_relaxed);
}

}  // namespace

pid_t current_pid() noexcept {
    pid_t pid = cached.load(std::memory_order_relaxed);
    if (pid != 0) return pid;
    // Registered before the first value is cached, so no fork can come
    // between a cached value and the handler that forgets it.
    static const bool registered = (pthread_atfork(nullptr, nullptr, forget) == 0);
    pid = ::getpid();
    if (registered) cached.store(pid, std::memory_order_relaxed);
    return pid;
}

}  // namespace sqlock::detail
