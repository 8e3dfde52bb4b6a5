#include "postgres_watchdog.hpp"

#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/current_pid.hpp"

namespace sqlock::detail::postgres {
namespace {

using clock = std::chrono::steady_clock;

struct Entry {
    std::uint64_t ticket;
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
        // Every round trip asks twice: no lock once this process has one.
        // `owner` is published after `current`, so a thread that reads its
        // own pid there reads this process's watchdog.
        static std::atomic<Watchdog*> current{nullptr};
        static std::atomic<pid_t> owner{0};
        const pid_t me = current_pid();
        if (owner.load(std::memory_order_acquire) == me)
            return *current.load(std::memory_order_relaxed);
        static std::mutex instance_mutex;
        std::lock_guard<std::mutex> guard(instance_mutex);
        if (owner.load(std::memory_order_relaxed) != me) {
            current.store(new Watchdog, std::memory_order_relaxed);
            owner.store(me, std::memory_order_release);
        }
        return *current.load(std::memory_order_relaxed);
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
        entries_.push_back(Entry{ticket, fd, deadline});
        // Wake the thread only when this deadline comes before the one it
        // sleeps towards: arming is on every round trip's path, and waking
        // the thread each time would cost two context switches per
        // statement. A later deadline is seen when the thread next wakes.
        if (deadline < wake_at_) cv_.notify_all();
        return ticket;
    }

    bool disarm(std::uint64_t ticket) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto it = find(ticket);
        if (it == entries_.end()) return false;
        bool fired = it->fired;
        *it = entries_.back();
        entries_.pop_back();
        return fired;
    }

    bool fired(std::uint64_t ticket) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto it = find(ticket);
        return it != entries_.end() && it->fired;
    }

  private:
    [[noreturn]] void run() {
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            auto next = clock::time_point::max();
            const auto now = clock::now();
            for (Entry& e : entries_) {
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

    // One per round trip under way: a handful, searched in place (a map
    // allocated a node on every round trip).
    std::vector<Entry>::iterator find(std::uint64_t ticket) {
        return std::find_if(entries_.begin(), entries_.end(),
                            [&](const Entry& e) { return e.ticket == ticket; });
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Entry> entries_;
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
