#include "state/release_hub.hpp"

#include <algorithm>
#include <vector>

#include "base/owner.hpp"

#include "sqlock/error.hpp"

namespace sqlock::detail {

std::string semaphore_key(const std::string& lockstring) {
    const std::size_t at = slot_suffix_at(lockstring);
    return at == std::string::npos ? std::string() : lockstring.substr(0, at);
}

ReleaseHub::ReleaseHub(std::function<std::unique_ptr<ReleaseListener>()> make_listener)
    // An identifier (a PostgreSQL channel, 41 bytes) no other process
    // listens on.
    : make_listener_(std::move(make_listener)), inbox_("sqlock_w_" + random_token()) {}

ReleaseHub::~ReleaseHub() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
        if (live_) live_->interrupt();  // rather than wait out its await()
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void ReleaseHub::abandon() noexcept {
    if (thread_.joinable()) thread_.detach();
    // In a forked child the thread does not exist; prevent joining it.
}

void ReleaseHub::start() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!started_) {
        started_ = true;
        thread_ = std::thread([this] { run(); });
    }
    // The first LISTEN normally takes a round trip; do not wait long if the
    // server is slow, waiters fall back to polling meanwhile.
    cv_.wait_for(lock, std::chrono::seconds(2),
                 [&] { return listening_.load() || listener_failed_ || stopping_; });
}

void ReleaseHub::run() {
    std::unique_ptr<ReleaseListener> listener;
    auto backoff = std::chrono::milliseconds(50);
    for (;;) {
        {
            std::lock_guard<std::mutex> guard(mutex_);
            if (stopping_) {
                live_ = nullptr;  // the listener goes with this frame
                return;
            }
        }
        try {
            if (!listener) {
                listener = make_listener_();
                if (!listener) {
                    std::lock_guard<std::mutex> guard(mutex_);
                    listener_failed_ = true;
                    cv_.notify_all();
                    return;
                }
                {
                    std::lock_guard<std::mutex> guard(mutex_);
                    live_ = listener.get();
                }
                listener->listen(inbox_);
                // Before waiters are told to re-check: from their next
                // attempt on, a release of what they wait for is pushed.
                say_waiting(*listener);
                {
                    std::lock_guard<std::mutex> guard(mutex_);
                    // Releases may have been missed while not listening.
                    reset_epoch_ = ++epoch_;
                    listening_ = true;
                }
                cv_.notify_all();
                backoff = std::chrono::milliseconds(50);
            }
            say_waiting(*listener);
            for (const std::string& name : listener->await(std::chrono::milliseconds(100)))
                released(name);
        } catch (const std::exception&) {
            {
                std::lock_guard<std::mutex> guard(mutex_);
                live_ = nullptr;
                said_.clear();  // they ended with the listener's session
                listening_ = false;
                listener_failed_ = true;  // waiters poll until we are back
                // Waiters asleep on a notification that may now never come
                // (a broken link, or a pooler recognised meanwhile) re-check
                // and switch to polling.
                reset_epoch_ = ++epoch_;
            }
            listener.reset();
            cv_.notify_all();
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait_for(lock, backoff, [&] { return stopping_; });
            backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
        }
    }
}

void ReleaseHub::say_waiting(ReleaseListener& listener) {
    std::vector<std::string> start, stop;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        for (const auto& [key, waiters] : wanted_)
            if (!said_.count(key)) start.push_back(key);
        for (const std::string& key : said_)
            if (!wanted_.count(key)) stop.push_back(key);
    }
    for (const std::string& key : stop) {
        {
            // Unsaid before we unsay it: a waiter that comes for it again
            // meanwhile must wait for it to be said anew, not trust it.
            std::lock_guard<std::mutex> guard(mutex_);
            if (wanted_.count(key)) continue;
            said_.erase(key);
        }
        listener.waiting(key, false);
    }
    for (const std::string& key : start) {
        {
            std::lock_guard<std::mutex> guard(mutex_);
            if (no_room_for(key)) {
                cv_.notify_all();  // its waiter polls instead
                continue;
            }
        }
        listener.waiting(key, true);
        {
            std::lock_guard<std::mutex> guard(mutex_);
            said_.insert(key);
        }
        cv_.notify_all();
    }
}

void ReleaseHub::watch(const std::string& key) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (++wanted_[key] == 1 && live_) live_->interrupt();
}

void ReleaseHub::unwatch(const std::string& key) noexcept {
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = wanted_.find(key);
    if (it == wanted_.end() || --it->second > 0) return;
    wanted_.erase(it);
    // Said no more soon: each release of it meanwhile costs a NOTIFY.
    if (live_) live_->interrupt();
}

bool ReleaseHub::watched(const std::string& key, std::chrono::steady_clock::time_point until) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_until(lock, until, [&] {
        return said_.count(key) || !listening_ || stopping_ || no_room_for(key);
    });
    return listening_ && said_.count(key) > 0;
}

bool ReleaseHub::no_room_for(const std::string& key) const {
    return said_.size() >= max_said_keys && !said_.count(key);
}

std::uint64_t ReleaseHub::mark() {
    std::lock_guard<std::mutex> guard(mutex_);
    return epoch_;
}

void ReleaseHub::bump(const std::string& key) {
    epochs_[key] = epoch_;
}

void ReleaseHub::released(const std::string& lockstring) {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        ++epoch_;
        bump(lockstring);
        std::string sem = semaphore_key(lockstring);
        if (!sem.empty()) bump(sem);
        // Bound memory: forget old entries, waiters then rely on their timers.
        if (epochs_.size() > 10000) epochs_.clear();
    }
    cv_.notify_all();
}

bool ReleaseHub::woken(const std::string& key, std::uint64_t mark) {
    std::lock_guard<std::mutex> guard(mutex_);
    return woken_locked(key, mark);
}

bool ReleaseHub::woken_locked(const std::string& key, std::uint64_t mark) const {
    if (stopping_ || reset_epoch_ > mark) return true;
    auto it = epochs_.find(key);
    return it != epochs_.end() && it->second > mark;
}

void ReleaseHub::wait_after(const std::vector<std::string>& keys, std::uint64_t mark,
                            std::chrono::steady_clock::time_point until) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait_until(lock, until, [&] {
        for (const std::string& key : keys)
            if (woken_locked(key, mark)) return true;
        return false;
    });
}

}  // namespace sqlock::detail
