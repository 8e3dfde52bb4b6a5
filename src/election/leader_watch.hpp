// The state behind a LeaderWatch (sqlock/leadership.hpp): what it last
// reported, when it reads next, and the listener that pushes changes where
// the backend has one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "contract/backend.hpp"
#include "sqlock/leadership.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// How long a pushed watcher goes without reading when nothing tells it
/// to: how soon it finds its link cut (a frozen link raises no error, and
/// pushes simply stop), and a safety net for changes nobody announces (a
/// holder that took the name with lock()). One indexed read per watcher.
constexpr std::chrono::seconds pushed_reread{5};

/// How soon a watcher that could not reach the database tries again.
constexpr std::chrono::seconds unreachable_retry{1};

class LeaderWatchState {
  public:
    LeaderWatchState(std::shared_ptr<LockerState> locker, std::string name, duration poll);
    ~LeaderWatchState();

    std::optional<LeaderEvent> next(duration timeout);
    void interrupt() noexcept;
    bool pushed() noexcept;

    const std::string name;

  private:
    using clock = std::chrono::steady_clock;

    /// Reads the leader and queues the events that tell the change since
    /// the last read; on a connection failure queues `disconnected` once.
    void read();
    /// Adds the events between what was reported and `now`.
    void report(const std::optional<LeaderInfo>& now);
    /// Makes a listener when the backend pushes and none is live.
    void start_listening();
    /// Sleeps until `until`, a push or interrupt(); true when interrupted.
    bool sleep_until(clock::time_point until);

    std::shared_ptr<LockerState> locker_;
    duration poll_;
    std::deque<LeaderEvent> pending_;

    enum class Known { nothing, vacant, leader };
    Known known_ = Known::nothing;
    std::int64_t id_ = 0;
    std::string value_;
    bool disconnected_ = false;

    clock::time_point read_at_{};    // when to read next; the epoch: now
    clock::time_point listen_at_{};  // when to try making a listener next
    std::unique_ptr<ReleaseListener> listener_;

    std::mutex mutex_;  // guards interrupted_ and listener_ against interrupt()
    std::condition_variable cv_;
    bool interrupted_ = false;
};

}  // namespace sqlock::detail
