#include "run/child_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "common/exit_codes.hpp"
#include "common/output.hpp"

extern char** environ;

namespace sqlock_cli {
namespace {

[[noreturn]] void cannot_run(const std::string& name, int err) {
    throw cli_error(err == ENOENT ? exit_code::command_not_found : exit_code::cannot_execute,
                    "cannot run " + in_quotes(name) + ": " + std::strerror(err));
}

bool is_executable_file(const std::string& path, int* err) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        *err = errno;
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        *err = EACCES;  // what execve says for a directory
        return false;
    }
    if (::access(path.c_str(), X_OK) != 0) {
        *err = errno;
        return false;
    }
    return true;
}

std::string env_name(const std::string& entry) {
    return entry.substr(0, entry.find('='));
}

}  // namespace

std::string resolve_executable(const std::string& name) {
    if (name.empty()) cannot_run(name, ENOENT);
    int err = 0;
    if (name.find('/') != std::string::npos) {
        if (!is_executable_file(name, &err)) cannot_run(name, err);
        return name;
    }
    const char* path_env = std::getenv("PATH");
    std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
    // Like execvp: a candidate that exists but cannot be executed is
    // remembered (126) while the search goes on for one that can.
    int found_err = ENOENT;
    std::size_t start = 0;
    for (;;) {
        std::size_t end = path.find(':', start);
        std::string dir = path.substr(start, end == std::string::npos ? end : end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (is_executable_file(candidate, &err)) return candidate;
        if (err != ENOENT && err != ENOTDIR) found_err = err;
        if (end == std::string::npos) break;
        start = end + 1;
    }
    cannot_run(name, found_err);
}

std::vector<std::string> command_environment(const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string entry = *e;
        bool replaced = false;
        for (const auto& x : extra) replaced = replaced || env_name(x) == env_name(entry);
        if (!replaced) env.push_back(std::move(entry));
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

namespace {

// What the child needs, prepared by the parent: the child shares the
// parent's memory and only reads it.
struct ExecPlan {
    const char* path;
    char* const* argv;
    char* const* envp;
    const sigset_t* mask;
    pid_t parent;
    int report_fd;  // execve's errno goes here; end of file means it succeeded
};

// Runs in the child, on its own stack, in the parent's memory (CLONE_VM):
// nothing but system calls, made directly rather than through libc's
// wrappers, which sanitizers intercept with code that must not run here;
// and no sanitizer instrumentation, which would book the child's accesses
// to the suspended parent thread.
__attribute__((no_sanitize("address", "thread", "undefined"))) int exec_child(void* arg) {
    auto* plan = static_cast<ExecPlan*>(arg);
#ifdef __linux__
    // Die with sqlock: the command must not outlive the lock's holder.
    ::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (::syscall(SYS_getppid) != plan->parent)  // sqlock already gone
        ::syscall(SYS_exit_group, exit_code::internal);
#endif
    // The kernel's sigset is the first 8 bytes of glibc's sigset_t.
    ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, plan->mask, nullptr, _NSIG / 8);
    ::syscall(SYS_execve, plan->path, plan->argv, plan->envp);
    const int err = errno;
    ::syscall(SYS_write, plan->report_fd, &err, sizeof err);
    ::syscall(SYS_exit_group,
              err == ENOENT ? exit_code::command_not_found : exit_code::cannot_execute);
    return 0;
}

// A signal handler would run in the child, in our memory, once the child
// unblocks its signals. The command installs none; if one ever appears,
// spawning falls back to fork().
bool has_signal_handlers() {
    for (int signo = 1; signo < NSIG; ++signo) {
        struct sigaction current {};
        if (::sigaction(signo, nullptr, &current) != 0) continue;  // glibc's own
        if (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN) return true;
    }
    return false;
}

}  // namespace

ChildProcess ChildProcess::spawn(const std::string& path, const std::vector<std::string>& argv,
                                 const std::vector<std::string>& env, const sigset_t& mask) {
    // Everything the child needs is prepared here: it only makes system
    // calls until execve().
    std::vector<char*> child_argv;
    for (const auto& a : argv) child_argv.push_back(const_cast<char*>(a.c_str()));
    child_argv.push_back(nullptr);
    std::vector<char*> child_env;
    for (const auto& e : env) child_env.push_back(const_cast<char*>(e.c_str()));
    child_env.push_back(nullptr);
    // execve's errno comes back through a close-on-exec pipe.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        throw cli_error(exit_code::internal, std::string("pipe: ") + std::strerror(errno));
    ExecPlan plan{path.c_str(), child_argv.data(), child_env.data(), &mask, ::getpid(), report[1]};

    // The way posix_spawn() starts a program (which cannot ask for
    // PR_SET_PDEATHSIG): the child borrows our memory instead of copying it,
    // and we are suspended until it has called execve() or exited. A fork()
    // would copy the page tables and turn every page we write afterwards
    // into a copy-on-write fault. Other threads (the heartbeat) run on
    // meanwhile; the child only reads memory prepared before.
    std::vector<char> stack(64 * 1024);
    const int flags = has_signal_handlers() ? SIGCHLD : CLONE_VM | CLONE_VFORK | SIGCHLD;
    const pid_t pid = ::clone(exec_child, stack.data() + stack.size(), flags, &plan);
    const int clone_errno = errno;
    ::close(report[1]);
    if (pid < 0) {
        ::close(report[0]);
        throw cli_error(exit_code::internal, std::string("clone: ") + std::strerror(clone_errno));
    }
    int err = 0;
    ssize_t n;
    do {
        n = ::read(report[0], &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    ::close(report[0]);
    ChildProcess child(pid);
    if (n == static_cast<ssize_t>(sizeof err)) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        child.pid_ = -1;
        cannot_run(argv.front(), err);
    }
    return child;
}

ChildProcess::~ChildProcess() {
    if (pid_ <= 0) return;
    // Only reached when sqlock gives up on an error path.
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
}

std::optional<int> ChildProcess::poll() {
    if (pid_ <= 0) return std::nullopt;
    int status = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) {
        pid_ = -1;
        return status;
    }
    if (r < 0) {
        // ECHILD: collected by someone else; its status is gone. Report an
        // internal error rather than waiting forever.
        pid_ = -1;
        return exit_code::internal << 8;  // a wait status meaning "exited 70"
    }
    return std::nullopt;
}

void ChildProcess::signal(int signo) noexcept {
    if (pid_ > 0) ::kill(pid_, signo);
}

}  // namespace sqlock_cli
