// Heartbeat — keeps one lock's lease alive from a background thread.
//
// Renews at a third of the lease. A failed renewal that finds the row gone or
// taken over means the lock is lost at once. A transient error (connection
// lost, database busy) is retried with backoff; the lock is declared lost
// only once a whole lease has passed since the last successful renewal,
// because only then can another holder have taken it over.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "sqlock/duration.hpp"

namespace sqlock::detail {

class Heartbeat {
  public:
    /// `renew` returns false if the lock is lost and throws on a transient
    /// failure; `lost` is called once when the lock is declared lost.
    Heartbeat(duration lease, std::function<bool()> renew, std::function<void()> lost);
    ~Heartbeat();  // stops and joins

    void stop() noexcept;
    /// In a forked child the thread does not exist: forget it without joining.
    void abandon() noexcept;

  private:
    void run();

    duration lease_;
    std::function<bool()> renew_;
    std::function<void()> lost_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace sqlock::detail
