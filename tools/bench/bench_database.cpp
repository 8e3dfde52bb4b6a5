#include "bench_database.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <exception>

namespace sqlock_bench {
namespace {

std::atomic<int> serial{0};

}  // namespace

BenchDatabase::BenchDatabase(const BackendTarget& target, const std::string& label)
    : target_(target) {
    const std::string n = std::to_string(++serial);
    if (const auto file_url = target.hooks().file_url) {
        location_ = target.location + "/" + label + "-" + n + ".db";
        url_ = file_url(location_);
        table_ = "sqlock_locks";
    } else {
        location_ = target.location;
        url_ = target.location;
        // Unique to this run, so concurrent runs and the tests never collide.
        table_ = "sqlock_bench_" + std::to_string(getpid()) + "_" + n + "_" + label;
    }
    sqlock::Locker locker = open(1);
    locker.init();
}

BenchDatabase::~BenchDatabase() {
    try {
        if (target_.hooks().file_url) {
            target_.hooks().remove_files(location_);
        } else {
            raw()->drop_table();
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sqlock-bench: could not remove table %s: %s\n", table_.c_str(),
                     e.what());
    }
}

sqlock::Locker BenchDatabase::open(std::size_t pool_size) const {
    sqlock::LockerOptions options;
    options.table = table_;
    options.pool_size = pool_size;
    options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    return sqlock::Locker(url_, options);
}

std::unique_ptr<RawClient> BenchDatabase::raw() const {
    return target_.hooks().connect(location_, table_);
}

}  // namespace sqlock_bench
