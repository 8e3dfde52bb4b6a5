#include "base/current_pid.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <new>

namespace sqlock::detail {
namespace {

struct Cache {
    std::atomic<pid_t> pid{0};  // 0: not known (a wiped page reads as zeros)
};

// The page, or null when the kernel cannot wipe it in a child.
Cache* cache() noexcept {
    static Cache* const page = []() -> Cache* {
        const long size = ::sysconf(_SC_PAGESIZE);
        if (size <= 0) return nullptr;
        void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        if (::madvise(p, static_cast<std::size_t>(size), MADV_WIPEONFORK) != 0) {
            ::munmap(p, static_cast<std::size_t>(size));
            return nullptr;
        }
        return new (p) Cache;
    }();
    return page;
}

}  // namespace

pid_t current_pid() noexcept {
    Cache* c = cache();
    if (!c) return ::getpid();
    pid_t pid = c->pid.load(std::memory_order_relaxed);
    if (pid != 0) return pid;
    pid = ::getpid();
    c->pid.store(pid, std::memory_order_relaxed);
    return pid;
}

}  // namespace sqlock::detail
