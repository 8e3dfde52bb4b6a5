#include "postgres_watchdog.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "current_pid.hpp"

namespace sqlock::detail::postgres {
namespace {

using clock = std::chrono::steady_clock;

struct Entry {
    int fd;
    clock::time_point deadline;
    bool fired = false;
};

// Leaked on purpose: its thread runs until the process ends, and a static
// destructor would have to join a thread that may be waiting. A forked child
// gets a new one: the parent's thread does not exist there, and its
// condition variable, copied with a waiter that is not there, must not be
// used again (glibc's broadcast would wait for that waiter forever).
class Watchdog {
  public:
    static Watchdog& instance() {
        static std::mutex instance_mutex;
        static Watchdog* current = nullptr;
        static pid_t owner = 0;
        std::lock_guard<std::mutex> guard(instance_mutex);
        if (!current || owner != current_pid()) {
            current = new Watchdog;
            owner = current_pid();
        }
        return *current;
    }

    Watchdog() {
        std::thread thread([this] { run(); });
        // Named here, before anyone can arm it (not from inside the thread,
        // which would race with a fork right after the first statement), so
        // that a test or an operator can tell it from the application's
        // threads: it allocates nothing and holds no lock a forked child
        // needs (the child makes its own watchdog), so a fork beside it is
        // safe.
        pthread_setname_np(thread.native_handle(), "sqlock-watchdog");
        thread.detach();
    }

    std::uint64_t arm(int fd, clock::time_point deadline) {
        std::lock_guard<std::mutex> guard(mutex_);
        std::uint64_t ticket = ++next_;
        entries_[ticket] = Entry{fd, deadline};
        // Wake the thread only when this deadline comes before the one it
        // sleeps towards: arming is on every round trip's path, and waking
        // the thread each time would cost two context switches per
        // statement. A later deadline is seen when the thread next wakes.
        if (deadline < wake_at_) cv_.notify_all();
        return ticket;
    }

    bool disarm(std::uint64_t ticket) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto it = entries_.find(ticket);
        if (it == entries_.end()) return false;
        bool fired = it->second.fired;
        entries_.erase(it);
        return fired;
    }

    bool fired(std::uint64_t ticket) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto it = entries_.find(ticket);
        return it != entries_.end() && it->second.fired;
    }

  private:
    [[noreturn]] void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            auto next = clock::time_point::max();
            const auto now = clock::now();
            for (auto& [ticket, e] : entries_) {
                if (e.fired) continue;
                if (e.deadline <= now) {
                    // Under the mutex: disarm() cannot return (and the caller
                    // cannot close the descriptor) while we use it.
                    ::shutdown(e.fd, SHUT_RDWR);
                    e.fired = true;
                } else if (e.deadline < next) {
                    next = e.deadline;
                }
            }
            wake_at_ = next;
            if (next == clock::time_point::max())
                cv_.wait(lock);
            else
                cv_.wait_until(lock, next);
            wake_at_ = clock::time_point::min();  // awake: arm() need not notify
        }
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::map<std::uint64_t, Entry> entries_;
    std::uint64_t next_ = 0;
    // When the thread wakes next by itself (max: only when notified; min:
    // it is awake and will look at every entry before sleeping again).
    clock::time_point wake_at_ = clock::time_point::min();
};

}  // namespace

Armed::Armed(int fd, clock::time_point deadline) {
    if (fd >= 0) ticket_ = Watchdog::instance().arm(fd, deadline);
}

Armed::~Armed() {
    if (ticket_) Watchdog::instance().disarm(ticket_);
}

bool Armed::fired() const {
    return ticket_ && Watchdog::instance().fired(ticket_);
}

}  // namespace sqlock::detail::postgres
