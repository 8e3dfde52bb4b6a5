// Starting the command `sqlock run` protects, and collecting it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace sqlock_cli {

/// Where `name` would be executed from, searched in $PATH the way execvp()
/// does (a name with a '/' is used as it is). Throws cli_error 127 when
/// there is no such file, 126 when it exists but is not executable. Done
/// before the lock is taken, so a typo never takes a lock.
std::string resolve_executable(const std::string& name);

/// The environment for the command: ours, plus `extra` ("NAME=value"
/// entries replacing any of the same name).
std::vector<std::string> command_environment(const std::vector<std::string>& extra);

/// ChildProcess
///
/// The running command. spawn() forks and executes it with the signal mask
/// sqlock started with; on Linux the child asks for SIGTERM when sqlock
/// dies (PR_SET_PDEATHSIG), so a sqlock killed with SIGKILL cannot leave the
/// command running without its lock. The destructor of a child that was
/// never collected kills and collects it: no zombie, no orphan.
class ChildProcess {
  public:
    /// Starts `path` with `argv` and `env`. Throws cli_error 126/127 (naming
    /// the command and errno) if it could not be executed; the failed child
    /// has been collected by then.
    static ChildProcess spawn(const std::string& path, const std::vector<std::string>& argv,
                              const std::vector<std::string>& env, const sigset_t& mask);

    ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
    ChildProcess& operator=(ChildProcess&&) = delete;
    ChildProcess(const ChildProcess&) = delete;
    ~ChildProcess();

    /// The child's pid; -1 once collected.
    pid_t pid() const noexcept { return pid_; }

    /// Collects the child if it has ended: its wait status, else nullopt.
    std::optional<int> poll();

    /// Sends `signo` to the child (no-op once collected).
    void signal(int signo) noexcept;

    /// Records that the caller collected the child itself (waitpid(-1)).
    void collected() noexcept { pid_ = -1; }

  private:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    pid_t pid_;  // -1 once collected
};

}  // namespace sqlock_cli
