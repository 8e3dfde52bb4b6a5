// `run --notify CMD`: shell commands that tell the outside world (a
// healthchecks-style ping, a chat message) that the job started or ended,
// run on the host that ran it. They are bounded in time, see nothing of
// the database's password, and their failure changes nothing but a line
// on stderr: the job's exit status and the lock are not theirs.
#pragma once

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sqlock_cli {

/// The environment for a notification: ours less what could carry the
/// database's password (SQLOCK_DB, PGPASSWORD, MYSQL_PWD, every variable
/// whose value holds a URL with a password or a password of one of
/// `db_urls`), then `extra` ("NAME=value", replacing any of the same name).
std::vector<std::string> notify_environment(const std::vector<std::string>& extra,
                                            const std::vector<std::string>& db_urls);

/// How one notification went.
struct NotifyResult {
    bool ok = true;
    /// When not ok: "exited 7", "was killed by SIGSEGV", "did not end within 10s
    /// and was killed", "could not be started: ...".
    std::string problem;
    std::int64_t exit_status = -1;  ///< its exit status, -1 if it has none
};

/// Runs `command` through `/bin/sh -c`, with `env` and the signal `mask`
/// sqlock started with, stdin from /dev/null and stdout to sqlock's
/// stderr (stdout is the job's), in a process group of its own. After
/// `timeout` the group gets SIGKILL. Returns when the shell has ended and
/// been collected. Never throws for the command's failure.
NotifyResult run_notification(const std::string& command, const std::vector<std::string>& env,
                              std::chrono::milliseconds timeout, const sigset_t& mask);

}  // namespace sqlock_cli
