// One Locker shared by many threads; the pool never blocks forever.
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::locker_options;

TEST_CASE("threads sharing a Locker exclude each other", "[threads]") {
    auto db = fresh_database();
    auto locker = db.open(locker_options().pool_size(3));
    std::atomic<int> inside{0}, max_inside{0}, acquisitions{0};
    std::atomic<int> errors{0};
    {
        std::vector<sqlock_test::ScopedThread> threads;
        for (int t = 0; t < 6; ++t) {
            threads.emplace_back([&] {
                try {
                    for (int i = 0; i < 20; ++i) {
                        auto lock = locker.lock("threaded", lock_options().wait(60s));
                        int now = ++inside;
                        int seen = max_inside.load();
                        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
                        }
                        ++acquisitions;
                        --inside;
                    }
                } catch (const sqlock::error&) {
                    ++errors;
                }
            });
        }
    }
    CHECK(errors == 0);
    CHECK(max_inside == 1);
    CHECK(acquisitions == 120);
    CHECK(locker.list().empty());
}
