// Worker processes: the benchmark's clients run as forked children, each with
// its own Locker and connections, as separate programs would.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

namespace sqlock_bench {

/// StartLine
///
/// Lives in a Shared<StartLine>. Workers connect and warm up first, then wait
/// here, so connection set-up is never timed and all of them start within
/// the same scheduler tick.
struct StartLine {
    std::atomic<int> ready{0};
    std::atomic<std::int64_t> start_ns{0};  // 0 until the parent fires

    /// In a worker: reports ready and waits for the start; returns its time.
    std::int64_t arrive_and_wait();
};

/// Workers
///
/// Forks `count` children running `body(i)`, i = 0..count-1. A child that
/// throws prints one line to stderr and exits 1; join() then throws naming
/// how many failed. Children leave with _exit(): the parent's atexit work
/// (and its Lockers, files and tables) is never touched by a child. The
/// destructor kills and reaps children that were not joined.
class Workers {
  public:
    Workers(int count, const std::function<void(int)>& body);
    ~Workers();
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    /// Waits until every worker reached `line`, then starts them
    /// `delay_ms` from now. Throws if a worker died before arriving.
    void start_together(StartLine& line, double delay_ms = 5);

    /// Waits for every child; throws if any failed.
    void join();

  private:
    void reap(bool block) noexcept;
    void abandon() noexcept;
    std::vector<pid_t> pids_;
    std::vector<int> status_;  // -1 while running
};

}  // namespace sqlock_bench
