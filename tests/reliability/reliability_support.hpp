// Helpers for the reliability suite: reading the lock table without going
// through sqlock (so a test can compare it byte for byte), load settings from
// the environment, what a battery of hostile inputs must leave alone, and
// memory shared with forked children. Running programs,
// server URLs and files: tests/support/.
#pragma once

#include <sys/mman.h>
#include <sys/types.h>

#include <atomic>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "test_support.hpp"

namespace reliability {

using namespace std::chrono_literals;

using sqlock_test::query;
using sqlock_test::SqlRow;

/// Every row of the lock table, every column as stored (with SQLite's storage
/// class), plus the table's definition: two equal dumps mean an unchanged table.
/// A test that calls it declares [needs:table_dump_sql]; throws
/// std::logic_error when the backend's test context has no
/// BackendHooks::table_dump_sql.
std::string dump_table(const sqlock_test::Database& db);

/// For a test written before tests declared their needs as tags: true; the
/// test must carry [needs:table_dump_sql] (sqlock_test::declares_need).
bool have_table_dump();

/// Every row that `locker` lists says expired() exactly when list_expired()
/// (what the database will take over and reap) names it.
void check_expired_agrees_with_list_expired(sqlock::Locker& locker);

/// What a battery of hostile inputs must leave alone in `db`'s table, there
/// for the object's lifetime: a live lock ("sentinel") held by another
/// Locker, and an expired row ("old") written by another program.
class Bystanders {
  public:
    explicit Bystanders(const sqlock_test::Database& db);

  private:
    sqlock::Locker holder_;
    sqlock::Lock sentinel_;
};

/// An integer from the environment, or `fallback`: lets CI and the sanitizer
/// runs scale the load without recompiling.
long env_long(const char* name, long fallback);

/// An object in anonymous shared memory, visible to children forked after it
/// was made. T must be usable from several processes (lock-free atomics and
/// plain data).
template <typename T>
class Shared {
  public:
    Shared() {
        void* p =
            mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
        ptr_ = new (p) T();
    }
    ~Shared() {
        ptr_->~T();
        munmap(ptr_, sizeof(T));
    }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;
    T* operator->() const { return ptr_; }
    T& operator*() const { return *ptr_; }

  private:
    T* ptr_;
};

/// Errors met in any of several processes, for a board in Shared memory
/// (a base of it): how many, and the text of the first.
struct SharedErrors {
    std::atomic<int> errors{0};
    char first_error[512]{};
    std::atomic<bool> error_written{false};

    void record_error(const std::string& text) {
        ++errors;
        if (!error_written.exchange(true))
            std::strncpy(first_error, text.c_str(), sizeof first_error - 1);
    }
};

/// True if this binary was built with AddressSanitizer or ThreadSanitizer.
bool under_sanitizer();

}  // namespace reliability
