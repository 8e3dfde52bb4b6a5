#include "heartbeat.hpp"

#include <algorithm>

namespace sqlock::detail {

Heartbeat::Heartbeat(duration lease, std::function<bool()> renew, std::function<void()> lost)
    : lease_(lease), renew_(std::move(renew)), lost_(std::move(lost)) {
    thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
    stop();
}

void Heartbeat::stop() noexcept {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
        thread_.join();
    else if (thread_.joinable())
        thread_.detach();
}

void Heartbeat::abandon() noexcept {
    if (thread_.joinable()) thread_.detach();
}

void Heartbeat::run() {
    using clock = std::chrono::steady_clock;
    const duration interval = std::max(lease_ / 3, duration(1));
    auto last_success = clock::now();
    auto next = last_success + interval;
    duration retry = std::max(std::min(interval / 4, duration(1000)), duration(1));
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (cv_.wait_until(lock, next, [&] { return stopping_; })) return;
        lock.unlock();
        bool lost = false;
        bool ok = false;
        try {
            ok = renew_();
            lost = !ok;
        } catch (...) {
            // Transient: the row may well still be ours. Lost only once a
            // whole lease has passed without a successful renewal.
            lost = clock::now() - last_success >= lease_;
        }
        lock.lock();
        if (stopping_) return;
        if (lost) {
            lock.unlock();
            lost_();
            return;
        }
        if (ok) {
            last_success = clock::now();
            next = last_success + interval;
        } else {
            next = std::min(clock::now() + retry, last_success + lease_);
        }
    }
}

}  // namespace sqlock::detail
