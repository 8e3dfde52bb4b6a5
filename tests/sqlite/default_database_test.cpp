// Where the embedded database lives: URL forms, $SQLOCK_DB, the default.
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "test_support.hpp"

using sqlock_test::locker_options;

namespace {

// Sets an environment variable for one scope.
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        const char* old = std::getenv(name);
        if (old) old_ = old;
        had_ = old != nullptr;
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ~ScopedEnv() {
        if (had_)
            setenv(name_, old_.c_str(), 1);
        else
            unsetenv(name_);
    }

  private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

}  // namespace

TEST_CASE("sqlite:relative/path.db is relative to the working directory", "[sqlite][url]") {
    std::string dir = sqlock_test::scratch_dir() + "/relative";
    std::filesystem::create_directories(dir);
    auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir);
    {
        sqlock::Locker locker("sqlite:locks.db");
        locker.init();
        CHECK(locker.try_lock("rel"));
    }
    std::filesystem::current_path(cwd);
    CHECK(std::filesystem::exists(dir + "/locks.db"));
}

TEST_CASE("no URL: $SQLOCK_DB, else the private default under XDG_STATE_HOME", "[sqlite][url]") {
    std::string state = sqlock_test::scratch_dir() + "/state";
    ScopedEnv xdg("XDG_STATE_HOME", state.c_str());
    {
        ScopedEnv db("SQLOCK_DB", nullptr);
        CHECK(sqlock::Locker::default_url() == "sqlite://" + state + "/sqlock/locks.db");
        sqlock::Locker locker;  // the embedded default: created and initialised on first use
        auto lock = locker.try_lock("default");
        REQUIRE(lock);
        struct stat st {};
        REQUIRE(stat((state + "/sqlock").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0700);
        REQUIRE(stat((state + "/sqlock/locks.db").c_str(), &st) == 0);
        CHECK((st.st_mode & 0777) == 0600);
    }
    {
        std::string other = "sqlite://" + sqlock_test::scratch_dir() + "/from-env.db";
        ScopedEnv db("SQLOCK_DB", other.c_str());
        CHECK(sqlock::Locker::default_url() == other);
        sqlock::Locker locker;
        CHECK(locker.url() == other);
        locker.init();
        CHECK(locker.try_lock("env"));
    }
}

TEST_CASE("a database other than the default needs init", "[sqlite][url]") {
    sqlock::Locker locker("sqlite://" + sqlock_test::scratch_dir() + "/not-initialised.db");
    try {
        locker.try_lock("x");
        FAIL("no error for a missing table");
    } catch (const sqlock::error& e) {
        CHECK(e.category() == sqlock::errc::configuration);
        CHECK(std::string(e.what()).find("sqlock init") != std::string::npos);
    }
}

// The pool's only connection is kept busy for certain: another process's
// write transaction makes try_lock() wait inside SQLite's busy handler while
// holding it. A second thread must then time out on the pool, not hang, and
// say how big the pool is and how much of it is busy.
TEST_CASE("a pool checkout times out naming the pool's size and busy count", "[sqlite][pool]") {
    const std::string path = sqlock_test::scratch_dir() + "/pool.db";
    sqlock::Locker("sqlite://" + path).init();
    sqlite3* blocker = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &blocker) == SQLITE_OK);
    REQUIRE(sqlite3_exec(blocker, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);

    sqlock::Locker locker(
        "sqlite://" + path + "?busy_timeout=10000",
        locker_options().pool_size(1).pool_timeout(std::chrono::milliseconds(200)));
    std::atomic<bool> inside{false};
    sqlock_test::ScopedThread busy([&] {
        inside = true;
        try {
            locker.try_lock("blocked");  // waits on the write lock, holding the connection
        } catch (const sqlock::error&) {
        }
    });
    REQUIRE(sqlock_test::eventually([&] { return inside.load(); }));
    // The connection is checked out once the attempt has begun; keep asking
    // until the pool reports it busy (each ask waits 200 ms at most).
    std::string message;
    REQUIRE(sqlock_test::eventually(
        [&] {
            try {
                locker.show("anything");
            } catch (const sqlock::error& e) {
                if (e.category() == sqlock::errc::timeout) message = e.what();
            }
            return !message.empty();
        },
        std::chrono::seconds(8)));
    CHECK(message.find("pool size 1") != std::string::npos);
    CHECK(message.find("1 busy") != std::string::npos);
    sqlite3_exec(blocker, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(blocker);
    busy.join();
}
