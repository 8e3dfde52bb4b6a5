// A LockObserver (sqlock/observer.hpp) that feeds histograms in the style of
// a Prometheus client library: how long acquisitions waited and how long
// renewals took, by outcome, written out in the text exposition format.
// Built and run by the consumer test (tests/consumer/check.sh) against the
// installed package:
//   c++ -std=c++17 -Wall -Wextra -Werror observer_histogram.cpp $(pkg-config --cflags --libs
//   sqlock)
//   ./a.out /tmp/locks.db
#include <sqlock/sqlock.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace {

// A cumulative histogram with fixed buckets, as prometheus-cpp's or
// client_golang's Histogram: observe() from any thread, text() for a scrape.
class Histogram {
  public:
    static constexpr std::array<double, 8> bounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0};

    void observe(double seconds) {
        std::lock_guard<std::mutex> guard(mutex_);
        for (std::size_t i = 0; i < bounds.size(); ++i)
            if (seconds <= bounds[i]) ++counts_[i];
        ++count_;
        sum_ += seconds;
    }

    // The samples of metric `name` with the label `labels` (name="value").
    std::string text(const std::string& name, const std::string& labels) const {
        std::lock_guard<std::mutex> guard(mutex_);
        std::string out;
        char line[256];
        for (std::size_t i = 0; i < bounds.size(); ++i) {
            std::snprintf(line, sizeof line, "%s_bucket{%s,le=\"%g\"} %llu\n", name.c_str(),
                          labels.c_str(), bounds[i], static_cast<unsigned long long>(counts_[i]));
            out += line;
        }
        std::snprintf(line, sizeof line, "%s_bucket{%s,le=\"+Inf\"} %llu\n%s_sum{%s} %.6f\n",
                      name.c_str(), labels.c_str(), static_cast<unsigned long long>(count_),
                      name.c_str(), labels.c_str(), sum_);
        out += line;
        std::snprintf(line, sizeof line, "%s_count{%s} %llu\n", name.c_str(), labels.c_str(),
                      static_cast<unsigned long long>(count_));
        return out + line;
    }

  private:
    mutable std::mutex mutex_;
    std::array<unsigned long long, bounds.size()> counts_{};
    unsigned long long count_ = 0;
    double sum_ = 0;
};

double seconds(sqlock::duration d) {
    return std::chrono::duration<double>(d).count();
}

// The observer: called from the acquiring thread and from heartbeat
// threads at once, so everything it touches is locked or atomic.
class LockMetrics : public sqlock::LockObserver {
  public:
    void on_acquire(const sqlock::AcquireEvent& e) override {
        waits(sqlock::to_string(e.outcome)).observe(seconds(e.waited));
    }
    void on_renew(const sqlock::RenewEvent& e) override {
        renewals_.observe(seconds(e.latency));
        if (e.late) {
            std::lock_guard<std::mutex> guard(mutex_);
            ++late_;
        }
    }
    void on_loss(const sqlock::LossEvent& e) override {
        std::cerr << "lock '" << e.name << "' (id " << e.fencing_id << ") was lost\n";
    }

    std::string text() {
        std::string out = "# TYPE app_lock_wait_seconds histogram\n";
        std::lock_guard<std::mutex> guard(mutex_);
        for (const auto& [outcome, h] : waits_)
            out += h->text("app_lock_wait_seconds", "outcome=\"" + outcome + "\"");
        out += "# TYPE app_lock_renewal_seconds histogram\n";
        out += renewals_.text("app_lock_renewal_seconds", "lock=\"all\"");
        return out + "# TYPE app_lock_late_renewals_total counter\napp_lock_late_renewals_total " +
               std::to_string(late_) + "\n";
    }

  private:
    Histogram& waits(const std::string& outcome) {
        std::lock_guard<std::mutex> guard(mutex_);
        auto& h = waits_[outcome];
        if (!h) h = std::make_unique<Histogram>();
        return *h;
    }

    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<Histogram>> waits_;
    Histogram renewals_;
    unsigned long long late_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: " << argv[0] << " FILE.db\n";
        return 64;
    }
    auto metrics = std::make_shared<LockMetrics>();
    sqlock::LockerOptions options;
    options.observer = metrics;
    sqlock::Locker locker(std::string("sqlite://") + argv[1], options);
    locker.init();

    sqlock::LockOptions held;
    held.expires = std::chrono::seconds(30);
    sqlock::Lock lock = locker.lock("report", held);
    lock.renew();
    lock.release();
    // Another process's hold (here another Locker's): the try finds it busy.
    sqlock::Locker other(std::string("sqlite://") + argv[1]);
    sqlock::Lock theirs = other.lock("report", held);
    if (locker.try_lock("report")) return 1;
    std::cout << metrics->text();
    return 0;
}
