// Running the real `sqlock` binary from tests: in the foreground (a Result)
// or in the background (a Process), against a fresh lock table of the
// backend under test.
//
// The database URL reaches sqlock through SQLOCK_DB, never through argv:
// failure reports print the arguments, and the PostgreSQL test URL carries
// a password that must never appear in test output.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace cli_test {

using args_t = std::vector<std::string>;
/// Extra environment for sqlock: a value, or nullopt to remove the variable.
using env_t = sqlock_test::Env;

/// A finished sqlock (sqlock_test::Outcome: code, out, err, err_lines()).
using Result = sqlock_test::Outcome;

/// How to start sqlock, beyond its arguments and environment
/// (sqlock_test::SpawnOptions). The default is what every test gets: stdin
/// empty, stdout and stderr to files, every signal at its default
/// disposition.
using sqlock_test::SpawnOptions;

/// sqlock running in the background (sqlock_test::Process): wait() collects
/// it, failing the test if it does not end in time; the destructor kills and
/// collects it if the test did not.
using sqlock_test::Process;

using sqlock_test::read_file;

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

/// Cli
///
/// sqlock pointed at one lock table: every call gets `--table` and
/// SQLOCK_DB; `bare` calls get neither (for tests of those options).
struct Cli {
    sqlock_test::Database db;
    /// Non-empty: sqlock runs in a UTS namespace of its own whose host name
    /// is this (unshare -u), as on another host (see can_name_hosts()).
    std::string host{};

    Result operator()(const args_t& args, const env_t& env = {}) const;
    Process start(const args_t& args, const env_t& env = {}) const;
    Process start(const args_t& args, const env_t& env, const SpawnOptions& how) const;
    /// Without --table and SQLOCK_DB (SQLOCK_DB removed from the environment).
    Result bare(const args_t& args, const env_t& env = {}) const;
};

/// A fresh initialised lock table on the backend under test.
Cli fresh_cli();

/// The same table, its sqlock running as host `host` (Cli::host).
Cli on_host(const Cli& cli, const std::string& host);

/// Whether Cli::host works here: `unshare -u` needs root (or user
/// namespaces). Says why not through have_tool.
bool can_name_hosts();

/// A new empty directory for one test's files.
std::string make_dir();
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

/// `args`, then "--" and `command`: a `run` with its command.
args_t with_command(args_t args, const args_t& command);

/// `sqlock run NAME OPTIONS... -- COMMAND...`.
args_t run_args(const std::string& name, const args_t& options, const args_t& command);

/// The row of lock `name` as `sqlock show --json` sees it (null if none).
nlohmann::json show_json(const Cli& cli, const std::string& name);

/// Checks that `r` is an error as sqlock reports every error: one line on
/// stderr starting "sqlock: ", nothing on stdout.
void check_one_line_error(const Result& r);

/// Columns a terminal gives a line of UTF-8: two for the CJK ideographs the
/// tests use (lead bytes 0xE4 to 0xE9), one for every other character.
std::size_t display_columns(const std::string& text);

/// The path of the SQLite file of `db` ("" on PostgreSQL).
std::string sqlite_file(const sqlock_test::Database& db);

/// Everything that could change when a command touches the database: for
/// SQLite the bytes of the database file and of every file beside it that
/// shares its name (-wal, -shm, -journal); on both backends the rows.
std::string database_state(const sqlock_test::Database& db);

}  // namespace cli_test
