#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <utility>

#include "test_support.hpp"

extern char** environ;

namespace sqlock_test {

namespace {

// The names (comm) of this process's threads, from /proc/self/task.
std::vector<std::string> thread_names() {
    std::vector<std::string> names;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        std::ifstream comm(it->path() / "comm");
        std::string name;
        std::getline(comm, name);
        names.push_back(name);
    }
    return names;
}

int decode_status(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline) {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()),
                    std::chrono::milliseconds(0));
}

}  // namespace

int thread_count() {
    // The PostgreSQL backend's watchdog thread is safe beside a fork: it
    // allocates nothing and a child makes its own (postgres_watchdog.cpp).
    const std::vector<std::string> names = thread_names();
    return static_cast<int>(std::count_if(
        names.begin(), names.end(), [](const std::string& n) { return n != "sqlock-watchdog"; }));
}

bool await_lookups_ended(std::chrono::seconds bound) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    for (auto pause = std::chrono::milliseconds(1);;
         pause = std::min(pause * 2, std::chrono::milliseconds(100))) {
        const std::vector<std::string> names = thread_names();
        if (std::find(names.begin(), names.end(), "sqlock-resolve") == names.end()) return true;
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(pause);
    }
}

// ThreadSanitizer's runtime starts a thread of its own with the process's
// first pthread_create and keeps it; its fork handler takes that thread's
// locks, so it is not one of the threads a child could deadlock on.
#if defined(__SANITIZE_THREAD__)
constexpr int runtime_threads = 1;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int runtime_threads = 1;
#else
constexpr int runtime_threads = 0;
#endif
#else
constexpr int runtime_threads = 0;
#endif

pid_t fork_child(child_work work) {
    if (work == child_work::runs_code) {
        const int threads = thread_count();
        if (threads > 1 + runtime_threads)
            throw std::logic_error(
                "test bug: fork() of a child that runs code, from a process with " +
                std::to_string(threads) +
                " threads; fork before starting threads, or exec a helper");
    }
    const pid_t parent = getpid();
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(125);  // the parent died before prctl
    }
    return pid;
}

std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    // Polled: a child's exit has no descriptor to wait on (pidfd_open needs
    // a newer libc than the one the tests assume).
    for (auto pause = std::chrono::microseconds(100);;
         pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return decode_status(status);
        // ECHILD: not our child, or already reaped by someone else. Not
        // "had to be killed": a mistake in the test, said as one.
        if (r < 0 && errno != EINTR)
            throw std::runtime_error("waiting for process " + std::to_string(pid) +
                                     " failed: " + std::strerror(errno));
        if (std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(pause);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return std::nullopt;
}

std::string read_within(int fd, std::size_t n, std::chrono::milliseconds timeout) {
    std::string data;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (data.size() < n) {
        const auto left = left_until(deadline);
        pollfd p{fd, POLLIN, 0};
        const int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        char buf[4096];
        const ssize_t got = read(fd, buf, std::min(sizeof buf, n - data.size()));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        data.append(buf, static_cast<std::size_t>(got));
    }
    return data;
}

int Outcome::err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
}

namespace {

// The environment for a child: ours (unless `clean`), with `changes` applied.
std::vector<std::string> child_environment(const Env& changes, bool clean) {
    std::vector<std::string> out;
    for (char** e = environ; !clean && *e; ++e) {
        const std::string entry = *e;
        if (!changes.count(entry.substr(0, entry.find('=')))) out.push_back(entry);
    }
    for (const auto& [name, value] : changes)
        if (value) out.push_back(name + "=" + *value);
    return out;
}

// argv and envp as execve wants them, built before fork(): after fork() in a
// process with threads, only async-signal-safe calls are allowed (no malloc).
struct ExecArgs {
    std::vector<std::string> strings_argv, strings_env;
    std::vector<char*> argv, envp;
    ExecArgs(const std::vector<std::string>& a, std::vector<std::string> e)
        : strings_argv(a), strings_env(std::move(e)) {
        for (auto& s : strings_argv) argv.push_back(s.data());
        argv.push_back(nullptr);
        for (auto& s : strings_env) envp.push_back(s.data());
        envp.push_back(nullptr);
    }
};

// A name for a file of a Process's own, in the test's scratch directory.
std::string scratch_file(const char* suffix) {
    static std::atomic<int> counter{0};
    return scratch_dir() + "/process-" + std::to_string(getpid()) + "-" +
           std::to_string(++counter) + suffix;
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const Env& env, const SpawnOptions& how)
    : name_(argv.empty() ? "" : argv.front()), own_group_(how.own_group) {
    if (argv.empty()) throw std::logic_error("Process: no argv");
    // Everything the child needs is made here, before fork().
    const ExecArgs args(argv, child_environment(env, how.clean_env));
    const std::string in_path = scratch_file(".in");
    write_file(in_path, how.input);
    made_.push_back(in_path);
    std::string out_target = how.stdout_path, err_target = how.stderr_path;
    if (out_target.empty() && !how.pipe_stdout && !how.stdout_broken_pipe) {
        out_target = out_path_ = scratch_file(".out");
        made_.push_back(out_path_);
    }
    if (err_target.empty() && !how.stderr_to_stdout && how.stderr_fd < 0) {
        err_target = err_path_ = scratch_file(".err");
        made_.push_back(err_path_);
    }
    int to_child[2] = {-1, -1}, from_child[2] = {-1, -1};
    // Closes the pipes' ends still open when setting up fails.
    auto close_pipes = [&] {
        for (int* fd : {&to_child[0], &to_child[1], &from_child[0], &from_child[1]})
            if (*fd >= 0) {
                close(*fd);
                *fd = -1;
            }
    };
    if (how.pipe_stdin && pipe2(to_child, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if ((how.pipe_stdout || how.stdout_broken_pipe) && pipe2(from_child, O_CLOEXEC) != 0) {
        close_pipes();
        throw std::runtime_error("pipe failed");
    }
    if (how.stdout_broken_pipe) {
        close(from_child[0]);
        from_child[0] = -1;
    }

    // Files, not pipes, by default: nothing can block on a full pipe, and a
    // hung program still leaves what it printed for the failure message.
    try {
        pid_ = fork_child(child_work::execs);
    } catch (...) {
        close_pipes();
        throw;
    }
    if (pid_ == 0) {
        if (how.own_group) setpgid(0, 0);
        // O_CLOEXEC: the program gets these as 0, 1 and 2 only.
        const int in = how.pipe_stdin ? to_child[0] : open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
        const int out = from_child[1] >= 0 ? from_child[1]
                                           : open(out_target.c_str(),
                                                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        const int err = how.stderr_to_stdout ? out
                        : how.stderr_fd >= 0 ? how.stderr_fd
                                             : open(err_target.c_str(),
                                                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (in < 0 || out < 0 || err < 0) _exit(126);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        // Catch2, or whoever started the test runner in the background, may
        // have changed signal handling: the program gets a clean slate.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction action {};
        sigemptyset(&action.sa_mask);
        action.sa_handler = SIG_DFL;
        for (int s = 1; s < 32; ++s)
            if (s != SIGKILL && s != SIGSTOP) sigaction(s, &action, nullptr);
        action.sa_handler = SIG_IGN;
        for (int s : how.ignored_signals) sigaction(s, &action, nullptr);
        execve(args.argv[0], args.argv.data(), args.envp.data());
        const char msg[] = "exec failed\n";
        (void)!::write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    // Also here: whichever of parent and child runs first, the group exists
    // before anyone signals it.
    if (how.own_group) setpgid(pid_, pid_);
    if (to_child[0] >= 0) close(to_child[0]);
    if (from_child[1] >= 0) close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    // A child that died must not kill the test when it writes to the pipe.
    if (how.pipe_stdin) ::signal(SIGPIPE, SIG_IGN);
}

Process Process::fork(const std::function<int()>& body) {
    std::fflush(nullptr);  // nothing buffered is written twice
    Process child;
    child.pid_ = fork_child(child_work::runs_code);
    if (child.pid_ == 0) {
        int code = 98;
        try {
            code = body();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "child: %s\n", e.what());
        } catch (...) {
            std::fprintf(stderr, "child: an exception\n");
        }
        std::fflush(nullptr);
        _exit(code);
    }
    return child;
}

Process::Process(Process&& other) noexcept
    : name_(std::move(other.name_)),
      pid_(std::exchange(other.pid_, -1)),
      own_group_(other.own_group_),
      code_(other.code_),
      in_(std::exchange(other.in_, -1)),
      out_(std::exchange(other.out_, -1)),
      buffer_(std::move(other.buffer_)),
      made_(std::move(other.made_)),
      out_path_(std::move(other.out_path_)),
      err_path_(std::move(other.err_path_)) {
    other.made_.clear();
}

Process::~Process() {
    if (pid_ > 0 && !code_) {
        kill_now();
        try {
            wait_child(pid_, std::chrono::seconds(10));
        } catch (const std::exception&) {
            // Reaped already (by the test itself): nothing left to wait for.
        }
    }
    // Whatever is left of its group (a job that outlived a failed test).
    if (pid_ > 0 && own_group_) kill(-pid_, SIGKILL);
    if (in_ >= 0) close(in_);
    if (out_ >= 0) close(out_);
    for (const std::string& path : made_) unlink(path.c_str());
}

void Process::kill_now() const {
    kill(own_group_ ? -pid_ : pid_, SIGKILL);
}

void Process::signal(int signo) const {
    kill(pid_, signo);
}

std::optional<int> Process::poll() {
    if (code_ || pid_ <= 0) return code_;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) code_ = decode_status(status);
    return code_;
}

std::optional<int> Process::wait_for(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (auto pause = std::chrono::microseconds(100);;
         pause = std::min(pause * 2, std::chrono::microseconds(5000))) {
        if (poll()) return code_;
        if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(pause);
    }
}

Outcome Process::finish(std::chrono::milliseconds deadline) {
    if (in_ >= 0) close(in_);
    in_ = -1;
    Outcome outcome;
    if (!wait_for(deadline)) {
        kill_now();
        wait_child(pid_, std::chrono::seconds(10));
        code_ = -1;
        outcome.timed_out = true;
    }
    outcome.code = *code_;
    if (out_ >= 0) {
        // Bounded: a grandchild may still hold the pipe open.
        buffer_ +=
            read_within(out_, std::numeric_limits<std::size_t>::max(), std::chrono::seconds(5));
        close(out_);
        out_ = -1;
    }
    outcome.out = out_path_.empty() ? buffer_ : read_file(out_path_);
    outcome.err = err();
    return outcome;
}

Outcome Process::wait(std::chrono::milliseconds timeout) {
    Outcome outcome = finish(timeout);
    if (outcome.timed_out)
        FAIL(name_ << " did not end within " << timeout.count() << " ms; stderr: " << outcome.err);
    return outcome;
}

std::string Process::out() const {
    return out_path_.empty() ? "" : read_file(out_path_);
}

std::string Process::err() const {
    return err_path_.empty() ? "" : read_file(err_path_);
}

std::optional<std::string> Process::read_line(std::chrono::milliseconds deadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        const std::size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return line;
        }
        const auto left = left_until(until);
        if (left.count() <= 0 || out_ < 0) return std::nullopt;
        pollfd p{out_, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return std::nullopt;
        char buf[4096];
        const ssize_t n = ::read(out_, buf, sizeof buf);
        if (n <= 0) return std::nullopt;
        buffer_.append(buf, static_cast<std::size_t>(n));
    }
}

void Process::write_line(const std::string& line) {
    const std::string data = line + "\n";
    if (in_ >= 0 && ::write(in_, data.data(), data.size()) < 0) {
        // The child is gone; finish() reports how it ended.
    }
}

Outcome run(const std::vector<std::string>& argv, const Env& env, const SpawnOptions& how,
            std::chrono::milliseconds deadline) {
    return Process(argv, env, how).finish(deadline);
}

std::vector<int> run_children(int n, const std::function<int(int)>& body,
                              std::chrono::milliseconds timeout) {
    std::vector<Process> children;
    for (int i = 0; i < n; ++i)
        children.push_back(Process::fork([&body, i] {
            try {
                return body(i);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "child %d: %s\n", i, e.what());
                return 98;
            }
        }));
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<int> codes;
    for (Process& child : children) codes.push_back(child.finish(left_until(deadline)).code);
    return codes;
}

}  // namespace sqlock_test
