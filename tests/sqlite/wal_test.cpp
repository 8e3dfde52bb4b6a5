// The WAL stays short: every process that is first to open the file (each
// `sqlock run` from cron) reads all of it to rebuild its index.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <string>

#include "test_support.hpp"

TEST_CASE("the WAL is checkpointed every few runs, not every thousand pages", "[sqlite][wal]") {
    auto db = sqlock_test::fresh_database();
    const std::string path = db.url.substr(std::string("sqlite://").size());
    auto locker = db.open();
    // 100 acquisitions and releases write about 800 pages: with SQLite's
    // default threshold (1000 pages) the WAL would hold them all.
    for (int i = 0; i < 100; ++i) {
        auto lock = locker.try_lock("wal-" + std::to_string(i % 7));
        REQUIRE(lock);
    }
    struct stat st {};
    REQUIRE(::stat((path + "-wal").c_str(), &st) == 0);
    const long frame = 24 + 4096;               // frame header + default page size
    const long bound = 32 + (64 + 16) * frame;  // threshold + one run's pages, with margin
    INFO("WAL size " << st.st_size << " bytes, bound " << bound);
    CHECK(st.st_size <= bound);
    CHECK(st.st_size > 0);
}
