// Helpers for the reliability suite: reading the lock table without going
// through sqlock (so a test can compare it byte for byte), running programs
// with a deadline, and memory shared with forked children.
#pragma once

#include <sys/mman.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace reliability {

using namespace std::chrono_literals;

using sqlock_test::query;
using sqlock_test::SqlRow;

/// Every row of the lock table, every column as stored (with SQLite's storage
/// class), plus the table's definition: two equal dumps mean an unchanged table.
/// Throws std::logic_error when the backend's test context has no
/// BackendHooks::table_dump_sql: check have_table_dump() first.
std::string dump_table(const sqlock_test::Database& db);

/// True when dump_table() works on this backend; otherwise skips the test
/// (sqlock_test::skip_test), which should return.
bool have_table_dump();

/// A server URL with its user name replaced (same password), e.g. to
/// connect as the test server's other accounts (sqlock_noaccess).
std::string with_user(const std::string& url, const std::string& user);

/// The port of a server URL with a port.
inline int port_of(const std::string& url) {
    auto at = url.rfind('@');
    auto colon = url.find(':', at == std::string::npos ? 12 : at);
    return std::stoi(url.substr(colon + 1));
}

/// `url` with its host replaced by `host` ("scheme://user:pw@HOST:port/...").
inline std::string with_host(const std::string& url, const std::string& host) {
    const auto at = url.rfind('@');
    const auto start = at == std::string::npos ? url.find("//") + 2 : at + 1;
    const auto end = url.find_first_of(":/", start);
    return url.substr(0, start) + host + url.substr(end);
}

/// `url` with its port replaced by `port`.
inline std::string with_port(const std::string& url, int port) {
    auto at = url.rfind('@');
    auto colon = url.find(':', at == std::string::npos ? 12 : at);
    auto slash = url.find('/', colon);
    return url.substr(0, colon + 1) + std::to_string(port) + url.substr(slash);
}

/// The password in the URL's userinfo, or "" if none.
std::string password_of(const std::string& url);

/// An integer from the environment, or `fallback`: lets CI and the sanitizer
/// runs scale the load without recompiling.
long env_long(const char* name, long fallback);

/// What a finished program did.
struct Outcome {
    int status = -1;  ///< exit code, or 128 + signal; -1 if it had to be killed at the deadline
    std::string out;
    std::string err;
    bool timed_out = false;
};

/// Runs `argv` with `env` added to (or, with an empty value, removed from)
/// this process's environment, feeding `input` on stdin, and kills it if it
/// has not finished within `deadline`.
Outcome run(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env = {}, const std::string& input = {},
            std::chrono::milliseconds deadline = 60s);

/// A running program with pipes to its stdin and stdout (stderr is captured
/// to a file and returned by finish()).
class Child {
  public:
    Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    /// Next line of stdout without the newline; nullopt at EOF or after `deadline`.
    std::optional<std::string> read_line(std::chrono::milliseconds deadline = 30s);
    /// Writes a line to its stdin.
    void write_line(const std::string& line);
    /// Closes stdin and waits (up to `deadline`, then SIGKILL) for the exit.
    Outcome finish(std::chrono::milliseconds deadline = 30s);
    pid_t pid() const { return pid_; }

  private:
    pid_t pid_ = -1;
    int in_ = -1, out_ = -1;
    std::string err_path_;
    std::string buffer_;
    bool done_ = false;
    Outcome outcome_;
};

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

/// True if this binary was built with AddressSanitizer or ThreadSanitizer.
bool under_sanitizer();

}  // namespace reliability
