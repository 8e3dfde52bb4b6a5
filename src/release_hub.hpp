// ReleaseHub — wakes waiters when a lock they want may have become free.
//
// Two sources of wake-ups: releases made through this process (any backend),
// and, for backends with push notifications (PostgreSQL LISTEN/NOTIFY), every
// release made anywhere, received on one listener connection per Locker by a
// background thread. Every waiter interested in a name is woken, never just
// one: a single wake-up could strand a waiter whose lock became free while
// another was woken. Backends without notifications are polled by the waiter
// with capped exponential backoff and jitter.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "backend.hpp"

namespace sqlock::detail {

class ReleaseHub {
  public:
    /// `make_listener` returns null if the backend cannot push notifications.
    explicit ReleaseHub(std::function<std::unique_ptr<ReleaseListener>()> make_listener);
    ~ReleaseHub();

    /// A point in the stream of releases; take it *before* an acquisition
    /// attempt, then wait_after() it, so no release in between is missed.
    std::uint64_t mark();

    /// Waits until a release of `key` after `mark`, or `until`. The caller
    /// chooses `until`: without notifications it is the next poll of its
    /// backoff (see Locker's acquire loop), so this never waits past it.
    void wait_after(const std::string& key, std::uint64_t mark,
                    std::chrono::steady_clock::time_point until);

    /// Records a release of `lockstring` (and wakes its waiters).
    void released(const std::string& lockstring);

    /// True once the listener runs, so waits need no tight polling.
    bool pushes() const noexcept { return listening_.load(); }

    /// Starts the listener thread (once) and waits briefly for it to listen.
    void start();

    /// Forget threads in a forked child: they do not exist there.
    void abandon() noexcept;

  private:
    void run();
    void bump(const std::string& key);

    std::function<std::unique_ptr<ReleaseListener>()> make_listener_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::map<std::string, std::uint64_t> epochs_;  // key -> last release epoch
    std::uint64_t epoch_ = 0;
    std::uint64_t reset_epoch_ = 0;  // all waiters retry (listener reconnected)
    bool started_ = false;
    bool stopping_ = false;
    bool listener_failed_ = false;
    std::atomic<bool> listening_{false};
    std::thread thread_;
};

/// The key under which waiters of `lockstring` wait: slot rows "name#N" also
/// wake waiters of the semaphore "name".
std::string semaphore_key(const std::string& lockstring);

}  // namespace sqlock::detail
