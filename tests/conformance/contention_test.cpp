// Several processes, one name: exactly one holder at a time, always.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>

#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;

TEST_CASE("processes contending for one name never overlap", "[contention][stress]") {
    auto db = fresh_database();
    // The witness lives outside the database: a file only one process can
    // create at a time. Overlapping holders would fail to create it.
    std::string witness = sqlock_test::scratch_dir() + "/witness-" + std::to_string(getpid());
    std::string count_dir = sqlock_test::scratch_dir() + "/count-" + std::to_string(getpid());
    mkdir(count_dir.c_str(), 0700);
    const int procs = 6, rounds = 30;
    auto codes = sqlock_test::run_children(procs, [&](int i) {
        auto locker = db.open();
        int got = 0;
        for (int r = 0; r < rounds; ++r) {
            auto lock = locker.try_lock("the-one", lock_options().expires(30s));
            if (!lock) {
                lock = locker.lock("the-one", lock_options().expires(30s).wait(60s));
            }
            if (!sqlock_test::enter_witness(witness)) return 2;  // two holders at once
            ++got;
            sqlock_test::leave_witness(witness);
        }
        std::string mark = count_dir + "/" + std::to_string(i) + "-" + std::to_string(got);
        close(open(mark.c_str(), O_CREAT | O_WRONLY, 0600));
        return got == rounds ? 0 : 3;
    });
    CHECK(codes == std::vector<int>(procs, 0));
    CHECK(db.open().list().empty());
}

TEST_CASE("processes on names of their own never turn each other away", "[contention][stress]") {
    // Nobody else wants a process's names, so every try_lock() must succeed
    // at once: an acquisition that locks other names' rows on its way (a
    // plan through the expires index) deadlocks with their releases, and a
    // deadlock given up on reads as "busy" on a free name.
    auto db = fresh_database();
    const int procs = 8, rounds = 150;
    auto codes = sqlock_test::run_children(procs, [&](int i) {
        auto locker = db.open();
        for (int r = 0; r < rounds; ++r) {
            auto lock = locker.try_lock("own-" + std::to_string(i) + "-" + std::to_string(r % 3),
                                        lock_options().expires(30s));
            if (!lock) return 2;  // refused a name that nobody holds
        }
        return 0;
    });
    CHECK(codes == std::vector<int>(procs, 0));
    CHECK(db.open().list().empty());
}

TEST_CASE("fencing tokens grow in acquisition order across processes", "[contention]") {
    auto db = fresh_database();
    std::string log = sqlock_test::scratch_dir() + "/fence-" + std::to_string(getpid());
    auto codes = sqlock_test::run_children(4, [&](int) {
        auto locker = db.open();
        for (int r = 0; r < 15; ++r) {
            auto lock = locker.lock("fence", lock_options().wait(60s));
            // Append under the lock: the file's order is the acquisition order.
            FILE* f = fopen(log.c_str(), "a");
            fprintf(f, "%lld\n", static_cast<long long>(lock.id()));
            fclose(f);
        }
        return 0;
    });
    REQUIRE(codes == std::vector<int>(4, 0));
    auto ids = sqlock_test::read_ids(log);
    CHECK(ids.size() == 60);
    // Strictly increasing: no neighbour pair where the later id is not larger.
    CHECK(std::adjacent_find(ids.begin(), ids.end(), std::greater_equal<>()) == ids.end());
}
