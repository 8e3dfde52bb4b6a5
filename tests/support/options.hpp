// Options in one expression, as C++17 writes them.
//
// The library's options (and the test support's SpawnOptions) are
// aggregates whose members all have defaults. C++20 code would set a few in
// one expression with designated initializers, `{.expires = 30s, .wait =
// 60s}`; the tests are C++17, as the library is (tests/CMakeLists.txt makes
// a designated initializer an error there), and write the same as
//
//   locker.lock("job", lock_options().expires(30s).wait(60s));
//   sqlock::Locker locker(url, locker_options().table(db.table).pool_size(2));
//
// Each setter sets the member of the same name; the value converts to the
// options type wherever one is expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "process.hpp"
#include "sqlock/sqlock.hpp"

namespace sqlock_test {

/// sqlock::LockOptions, member by member: lock_options().expires(1h).
class LockOptionsOf {
  public:
    LockOptionsOf& expires(sqlock::duration d) {
        options_.expires = d;
        return *this;
    }
    LockOptionsOf& wait(sqlock::duration d) {
        options_.wait = d;
        return *this;
    }
    LockOptionsOf& wait_forever(bool on) {
        options_.wait_forever = on;
        return *this;
    }
    LockOptionsOf& min_hold(sqlock::duration d) {
        options_.min_hold = d;
        return *this;
    }
    LockOptionsOf& heartbeat(bool on) {
        options_.heartbeat = on;
        return *this;
    }
    LockOptionsOf& on_lost(sqlock::lost_handler handler) {
        options_.on_lost = std::move(handler);
        return *this;
    }
    LockOptionsOf& reentrant(bool on) {
        options_.reentrant = on;
        return *this;
    }
    LockOptionsOf& metadata(std::map<std::string, std::string> values) {
        options_.metadata = std::move(values);
        return *this;
    }
    operator sqlock::LockOptions() const { return options_; }

  private:
    sqlock::LockOptions options_;
};
inline LockOptionsOf lock_options() {
    return {};
}

/// sqlock::LockerOptions, member by member: locker_options().table(t).
class LockerOptionsOf {
  public:
    LockerOptionsOf& table(std::string name) {
        options_.table = std::move(name);
        return *this;
    }
    LockerOptionsOf& pool_size(std::size_t size) {
        options_.pool_size = size;
        return *this;
    }
    LockerOptionsOf& pool_timeout(sqlock::duration d) {
        options_.pool_timeout = d;
        return *this;
    }
    LockerOptionsOf& db_timeout(sqlock::duration d) {
        options_.db_timeout = d;
        return *this;
    }
    LockerOptionsOf& auto_init(sqlock::LockerOptions::auto_init_mode mode) {
        options_.auto_init = mode;
        return *this;
    }
    operator sqlock::LockerOptions() const { return options_; }

  private:
    sqlock::LockerOptions options_;
};
inline LockerOptionsOf locker_options() {
    return {};
}

/// sqlock::HistoryQuery, member by member: history_query().name("job").
class HistoryQueryOf {
  public:
    HistoryQueryOf& name(std::string lock_name) {
        query_.name = std::move(lock_name);
        return *this;
    }
    HistoryQueryOf& since(sqlock::duration d) {
        query_.since = d;
        return *this;
    }
    HistoryQueryOf& limit(std::size_t most) {
        query_.limit = most;
        return *this;
    }
    operator sqlock::HistoryQuery() const { return query_; }

  private:
    sqlock::HistoryQuery query_;
};
inline HistoryQueryOf history_query() {
    return {};
}

/// sqlock::RunStart, member by member: run_start().program("backup").
class RunStartOf {
  public:
    RunStartOf& program(std::string name) {
        info_.program = std::move(name);
        return *this;
    }
    RunStartOf& window_start_ms(std::int64_t start_ms) {
        info_.window_start_ms = start_ms;
        return *this;
    }
    operator sqlock::RunStart() const { return info_; }

  private:
    sqlock::RunStart info_;
};
inline RunStartOf run_start() {
    return {};
}

/// SpawnOptions (process.hpp), member by member: spawn_options().own_group(true).
class SpawnOptionsOf {
  public:
    SpawnOptionsOf& pipe_stdin(bool on) {
        options_.pipe_stdin = on;
        return *this;
    }
    SpawnOptionsOf& pipe_stdout(bool on) {
        options_.pipe_stdout = on;
        return *this;
    }
    SpawnOptionsOf& stderr_path(std::string path) {
        options_.stderr_path = std::move(path);
        return *this;
    }
    SpawnOptionsOf& own_group(bool on) {
        options_.own_group = on;
        return *this;
    }
    operator SpawnOptions() const { return options_; }

  private:
    SpawnOptions options_;
};
inline SpawnOptionsOf spawn_options() {
    return {};
}

}  // namespace sqlock_test
