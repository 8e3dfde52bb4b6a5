// Running the real `sqlock` binary from tests: in the foreground (a Result)
// or in the background (a Process), against a fresh lock table of the
// backend under test.
//
// The database URL reaches sqlock through SQLOCK_DB, never through argv:
// failure reports print the arguments, and the PostgreSQL test URL carries
// a password that must never appear in test output.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace cli_test {

using args_t = std::vector<std::string>;
/// Extra environment for sqlock: a value, or nullopt to remove the variable.
using env_t = std::map<std::string, std::optional<std::string>>;

/// A finished sqlock.
struct Result {
    int code = -1;  ///< exit status, or 128+N if killed by signal N
    std::string out;
    std::string err;
    /// Number of lines on stderr.
    int err_lines() const;
};

/// How to start sqlock, beyond its arguments and environment. The default is
/// what every test gets: stdin /dev/null, stdout and stderr to files, every
/// signal sqlock handles at its default disposition.
struct SpawnOptions {
    /// stdout goes to this file instead (e.g. "/dev/full").
    std::string stdout_path;
    /// stdout is a pipe nobody reads any more (a reader that went away).
    bool stdout_broken_pipe = false;
    /// stderr goes to this descriptor (a terminal: Pty::slave()) if >= 0.
    int stderr_fd = -1;
    /// Set to SIG_IGN before exec, as `nohup` does for SIGHUP.
    std::vector<int> ignored_signals;
};

/// Pty
///
/// A pseudo-terminal for sqlock's stderr: the test reads from the master side
/// what a user at a terminal would see.
class Pty {
  public:
    Pty();  ///< fails the test if no pty can be opened
    Pty(const Pty&) = delete;
    Pty& operator=(const Pty&) = delete;
    ~Pty();
    /// The terminal side, for SpawnOptions::stderr_fd.
    int slave() const { return slave_; }
    /// Closes the test's copy of the terminal side (after starting sqlock), so
    /// that the master sees end of file once sqlock is gone.
    void close_slave();
    /// Everything written to the terminal so far (reads without blocking).
    const std::string& text();

  private:
    int master_ = -1, slave_ = -1;
    std::string text_;
};

/// Process
///
/// sqlock running in the background; stdout and stderr go to files. The
/// destructor kills and collects it if the test did not.
class Process {
  public:
    Process(pid_t pid, std::string out_path, std::string err_path);
    Process(Process&&) noexcept;
    Process& operator=(Process&&) = delete;
    ~Process();

    pid_t pid() const { return pid_; }
    /// Sends a signal to sqlock (and only to sqlock).
    void signal(int signo) const;
    /// The exit code if it has ended (collects it), else nullopt.
    std::optional<int> poll();
    /// Waits for the end, at most `timeout` (then kills it and fails the test).
    Result wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    std::string out() const;
    std::string err() const;

  private:
    pid_t pid_;
    std::optional<int> code_;
    std::string out_path_, err_path_;
};

/// Cli
///
/// sqlock pointed at one lock table: every call gets `--table` and
/// SQLOCK_DB; `bare` calls get neither (for tests of those options).
struct Cli {
    sqlock_test::Database db;

    Result operator()(const args_t& args, const env_t& env = {}) const;
    Process start(const args_t& args, const env_t& env = {}) const;
    Process start(const args_t& args, const env_t& env, const SpawnOptions& how) const;
    /// Without --table and SQLOCK_DB (SQLOCK_DB removed from the environment).
    Result bare(const args_t& args, const env_t& env = {}) const;
};

/// A fresh initialised lock table on the backend under test.
Cli fresh_cli();

/// A new empty directory for one test's files.
std::string make_dir();
std::string read_file(const std::string& path);
bool exists(const std::string& path);
void touch(const std::string& path);
/// Lines in a file (0 if it does not exist).
int count_lines(const std::string& path);

/// Waits until `path` exists (up to 10 s).
bool wait_for_file(const std::string& path);

/// A shell command that records one execution in `witness` (one line each)
/// and then blocks until `go` exists: the lock stays held, without sleeping
/// for a guessed time, until the test says so.
args_t blocking_command(const std::string& witness, const std::string& go);

/// A shell command that traps `signal_name`, writes its name to `caught` and
/// exits 0; it creates `ready` once the trap is installed.
args_t trapping_command(const std::string& signal_name, const std::string& ready,
                        const std::string& caught);

/// The path of the SQLite file of `db` ("" on PostgreSQL).
std::string sqlite_file(const sqlock_test::Database& db);

/// Everything that could change when a command touches the database: for
/// SQLite the bytes of the database file and of every file beside it that
/// shares its name (-wal, -shm, -journal); on both backends the rows.
std::string database_state(const sqlock_test::Database& db);

}  // namespace cli_test
