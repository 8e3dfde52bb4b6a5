// Where the embedded database lives: URL forms, $SQLOCK_DB, the default.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "test_support.hpp"

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
