// sqlock's exit codes: sysexits(3) values where one fits, so cron wrappers and
// scripts can tell "someone else has it" from "the database is down" from
// "you typed it wrong" without reading messages.
#pragma once

#include <exception>
#include <string>

#include "sqlock/error.hpp"

namespace sqlock_cli {

namespace exit_code {
constexpr int ok = 0;
constexpr int not_held = 1;        ///< `show`: not held (like grep's "no match")
constexpr int not_paused = 1;      ///< `resume`: NAME was not paused (the same "no match")
constexpr int usage = 64;          ///< EX_USAGE: bad flag, duration, name, table name
constexpr int unavailable = 69;    ///< EX_UNAVAILABLE: database unreachable
constexpr int internal = 70;       ///< EX_SOFTWARE: database error or a bug
constexpr int busy = 75;           ///< EX_TEMPFAIL: lock held, or the wait ran out
constexpr int configuration = 78;  ///< EX_CONFIG: missing table or file, refused login
/// Our own: the lock was lost while held (lease ran out and someone took it,
/// or it was force-released). Outside sysexits' 64..78 so it is unambiguous.
constexpr int lost = 79;
/// Our own: `run` found the job paused (`sqlock pause`) and did not run it.
/// Next to 79, outside sysexits and below the 126+ that shells use, and
/// not 75: a wrapper that retries "busy" must not retry a pause.
constexpr int paused = 80;
/// `run --max-runtime`: the job ran too long and was stopped; what
/// timeout(1) exits with, so a wrapper reads it the same way.
constexpr int timed_out = 124;
constexpr int cannot_execute = 126;  ///< the command exists but could not be run
constexpr int command_not_found = 127;
constexpr int signal_base = 128;  ///< 128+N: the command was killed by signal N
}  // namespace exit_code

/// The exit code for a library error. `conflict` is what busy and timeout
/// map to (75 unless `run --conflict-exit-code` says otherwise).
int exit_code_for(sqlock::errc category, int conflict = exit_code::busy);

/// The exit code table, as printed by `sqlock --help` and `sqlock help run`.
const std::string& exit_code_help();

/// cli_error
///
/// A failure the command line reports itself: a one-line message (may be
/// empty when already reported) and the exit code to leave with.
/// `quiet_ok` marks expected outcomes (lock busy) that --quiet silences.
class cli_error : public std::exception {
  public:
    cli_error(int code, std::string message, bool quiet_ok = false)
        : code_(code), message_(std::move(message)), quiet_ok_(quiet_ok) {}
    int code() const noexcept { return code_; }
    bool quiet_ok() const noexcept { return quiet_ok_; }
    const char* what() const noexcept override { return message_.c_str(); }

  private:
    int code_;
    std::string message_;
    bool quiet_ok_;
};

/// A usage error (exit 64).
inline cli_error usage_error(std::string message) {
    return cli_error(exit_code::usage, std::move(message));
}

}  // namespace sqlock_cli
