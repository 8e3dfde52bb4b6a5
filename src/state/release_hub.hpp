// ReleaseHub — wakes waiters when a lock they want may have become free.
//
// Two sources of wake-ups: releases made through this process (any backend),
// and, for backends with push notifications (PostgreSQL LISTEN/NOTIFY), the
// releases of the names this process's waiters watch, made anywhere, and the
// wake-ups sent to its inbox by waiters leaving the line ahead of its own
// (wait_queue.hpp), received on one listener connection per Locker by a
// background thread. Within the process every waiter of a name is woken:
// the queue, not the hub, decides which one goes first. Backends without
// notifications are polled by the waiter.
//
// A backend may push only the releases of names a listener says it waits for
// (PostgreSQL: most releases have no waiter, and a NOTIFY costs every
// release on the server). So a waiter watch()es its name before it relies on
// a push: the listener says so on its session, again after every reconnect,
// before waiters are told to re-check.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contract/backend.hpp"

namespace sqlock::detail {

class ReleaseHub {
  public:
    /// `make_listener` returns null if the backend cannot push notifications.
    explicit ReleaseHub(std::function<std::unique_ptr<ReleaseListener>()> make_listener);
    ~ReleaseHub();

    /// A point in the stream of releases; take it *before* an acquisition
    /// attempt, then wait_after() it, so no release in between is missed.
    std::uint64_t mark();

    /// Waits until a release of any of `keys` (a lock's name, a set's
    /// names) after `mark`, or `until`. The caller chooses `until`: without
    /// notifications it is the next poll of its backoff (wait_loop.cpp), so
    /// this never waits past it.
    void wait_after(const std::vector<std::string>& keys, std::uint64_t mark,
                    std::chrono::steady_clock::time_point until);

    /// Whether wait_after(key, mark, ...) would return at once: a release of
    /// `key` (or a wake-up for it) came after `mark`, or every waiter is to
    /// look again.
    bool woken(const std::string& key, std::uint64_t mark);

    /// Says that a waiter of `key` will sleep on pushes. Every watch() is
    /// matched by one unwatch() (WatchGuard does it).
    void watch(const std::string& key);
    void unwatch(const std::string& key) noexcept;

    /// Waits, until `until` at most, for the listener to say on the server
    /// that `key` is waited for. True once it has: then every release of
    /// `key` from now on is pushed, or the listener fails and wait_after()
    /// returns for a re-check. False when there are no pushes now, or the
    /// listener already says max_said_keys others (poll).
    bool watched(const std::string& key, std::chrono::steady_clock::time_point until);

    /// The most keys the listener says at once. Each is an entry in the
    /// server's shared lock table (PostgreSQL: max_locks_per_transaction x
    /// max_connections, for every session), so a Locker with waiters on
    /// thousands of names does not fill it; waiters beyond it poll.
    static constexpr std::size_t max_said_keys = 256;

    /// Records a release of `lockstring` (and wakes its waiters).
    void released(const std::string& lockstring);

    /// True once the listener runs, so waits need no tight polling.
    bool pushes() const noexcept { return listening_.load(); }

    /// Where a waiter of this process is woken by the one ahead of it in
    /// line (ReleaseListener::listen): the channel this hub's listeners
    /// listen on, once one runs (with a backend that cannot push, nobody
    /// ever sends to it).
    const std::string& inbox() const noexcept { return inbox_; }

    /// Starts the listener thread (once) and waits briefly for it to listen.
    void start();

    /// Forget threads in a forked child: they do not exist there.
    void abandon() noexcept;

  private:
    void run();
    void bump(const std::string& key);
    bool woken_locked(const std::string& key, std::uint64_t mark) const;
    /// Brings what `listener` says is waited for in line with wanted_.
    void say_waiting(ReleaseListener& listener);
    /// True when `key` is not said and cannot be until others are unsaid.
    bool no_room_for(const std::string& key) const;

    std::function<std::unique_ptr<ReleaseListener>()> make_listener_;
    const std::string inbox_;  // random, fixed for the hub's life
    std::mutex mutex_;
    std::condition_variable cv_;
    std::map<std::string, std::uint64_t> epochs_;  // key -> last release epoch
    std::uint64_t epoch_ = 0;
    std::uint64_t reset_epoch_ = 0;  // all waiters retry (listener reconnected)
    bool started_ = false;
    bool stopping_ = false;
    bool listener_failed_ = false;
    std::atomic<bool> listening_{false};
    std::map<std::string, int> wanted_;  // key -> waiters that watch it
    std::set<std::string> said_;         // keys the current listener has said
    ReleaseListener* live_ = nullptr;    // the listener, to interrupt() it
    std::thread thread_;
};

/// Watches a key for as long as it lives.
class WatchGuard {
  public:
    WatchGuard(ReleaseHub& hub, std::string key) : hub_(hub), key_(std::move(key)) {
        hub_.watch(key_);
    }
    ~WatchGuard() { hub_.unwatch(key_); }
    WatchGuard(const WatchGuard&) = delete;
    WatchGuard& operator=(const WatchGuard&) = delete;

  private:
    ReleaseHub& hub_;
    std::string key_;
};

/// The key under which waiters of `lockstring` wait: slot rows "name#N" also
/// wake waiters of the semaphore "name".
std::string semaphore_key(const std::string& lockstring);

}  // namespace sqlock::detail
