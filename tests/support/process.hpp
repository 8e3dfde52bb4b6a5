// Child processes for tests: forking safely, running a program or a piece of
// test code in a child, and collecting what it did, always within a bound.
//
// Every child dies with the test process (PR_SET_PDEATHSIG), every wait has
// a deadline, and a Process that goes out of scope kills and reaps its child:
// a failing REQUIRE never leaves a process behind to disturb the next test.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sqlock_test {

/// What a forked child will do.
enum class child_work {
    runs_code,  ///< runs test code (allocates, connects): the parent must have one thread
    execs,      ///< only async-signal-safe calls, then execve: threads are fine
};

/// Forks a child that dies with this process (PR_SET_PDEATHSIG, SIGKILL).
///
/// With `child_work::runs_code` it throws std::logic_error instead if this
/// process has more than one thread: a child forked from a threaded process
/// inherits every lock another thread held at that moment (malloc's, the
/// sanitizer allocator's, libpq's) and can deadlock on the first of them. Fork
/// such children before any thread starts, or exec a helper program.
pid_t fork_child(child_work work);

/// Number of threads of this process (from /proc/self/task), not counting
/// the library's fork-safe PostgreSQL watchdog.
int thread_count();

/// Waits up to `bound` until no host name lookup of the library's is under
/// way in this process (no "sqlock-resolve" thread, host_resolution.cpp);
/// says whether none is. A caller stops waiting for a lookup at its
/// db_timeout, but the lookup goes on for as long as the resolver's own
/// timeouts (5 s per try, 2 tries, per nameserver, by default): a test that
/// makes one waits for it, so that a later fork_child(runs_code) does not
/// find a second thread.
bool await_lookups_ended(std::chrono::seconds bound);

/// Waits for `pid` up to `timeout`; returns its exit code (128+s if killed by
/// signal s), or nullopt if it had to be killed (SIGKILL) at the deadline.
/// Throws std::runtime_error when it cannot be waited for (ECHILD: not a
/// child of ours, or reaped already).
std::optional<int> wait_child(pid_t pid, std::chrono::milliseconds timeout);

/// Reads from `fd` until `n` bytes, end of file or `timeout`, whichever comes
/// first (a child that hangs must not hang the test); returns what it read.
std::string read_within(int fd, std::size_t n, std::chrono::milliseconds timeout);

/// Changes to a child's environment: a value sets the variable, nullopt
/// removes it.
using Env = std::map<std::string, std::optional<std::string>>;

/// What a finished process did.
struct Outcome {
    /// Exit code, 128+N if killed by signal N, or -1 if it had to be killed
    /// at the deadline.
    int code = -1;
    std::string out;  ///< its stdout, when the Process captured it
    std::string err;  ///< its stderr, when the Process captured it
    bool timed_out = false;
    /// Number of lines on stderr (a last line without a newline counts).
    int err_lines() const;
};

/// How a program is started, beyond its arguments and environment. The
/// default: stdin empty, stdout and stderr to files of the Process's own
/// (Process::out(), err()), every signal at its default disposition and none
/// blocked, whatever the test runner's own were.
struct SpawnOptions {
    /// stdin holds these bytes (empty: end of file at once).
    std::string input;
    /// stdin is a pipe: Process::write_line(); closed by finish().
    bool pipe_stdin = false;
    /// stdout is a pipe: Process::read_line().
    bool pipe_stdout = false;
    /// stdout goes to this file instead (e.g. "/dev/full"); out() is then "".
    std::string stdout_path;
    /// stdout is a pipe nobody reads any more (a reader that went away): the
    /// first write fails (EPIPE, or SIGPIPE), with no race against a reader.
    bool stdout_broken_pipe = false;
    /// stderr goes to this file instead; err() is then "".
    std::string stderr_path;
    /// stderr goes where stdout goes.
    bool stderr_to_stdout = false;
    /// stderr goes to this descriptor (a terminal, say) if >= 0.
    int stderr_fd = -1;
    /// Set to SIG_IGN before exec, as `nohup` does for SIGHUP.
    std::vector<int> ignored_signals;
    /// The environment is the Env given and nothing of this process's.
    bool clean_env = false;
    /// A process group of its own, led by the child: the Process's clean-up
    /// kills the whole group (a job that outlived a failed test with it).
    bool own_group = false;
};

/// Process
///
/// A child process the test owns: a program started with execve (argv[0] is
/// a path; there is no $PATH search), or test code run in a forked child
/// (Process::fork). Its end is collected with a bound: poll() does not wait,
/// wait_for() waits and leaves it running, finish() and wait() kill it at
/// their deadline. The destructor kills it (its group with own_group) and
/// reaps it if the test did not, and removes the files it made for stdout and
/// stderr.
///
/// Starting a program is safe from a process with threads: between fork and
/// exec the child makes only async-signal-safe calls.
///
/// Thread safety: one Process is used by one thread at a time.
///
///   Process job({"/bin/sh", "-c", "echo started; read line"}, {},
///               spawn_options().pipe_stdin(true).pipe_stdout(true));
///   REQUIRE(job.read_line() == "started");
///   job.write_line("done");
///   CHECK(job.finish().code == 0);
class Process {
  public:
    Process(const std::vector<std::string>& argv, const Env& env = {},
            const SpawnOptions& how = {});

    /// Runs `body` in a forked child (fork_child(child_work::runs_code): this
    /// process must have one thread), which exits with what `body` returns,
    /// or 98 if it throws (never into Catch from a child). The child's stdout
    /// and stderr are the test's.
    static Process fork(const std::function<int()>& body);

    Process(Process&& other) noexcept;
    Process& operator=(Process&&) = delete;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    ~Process();

    /// Its process id (and its group's, with own_group), also after the end.
    pid_t pid() const { return pid_; }
    /// Sends a signal to the child (and only to it, even with own_group).
    void signal(int signo) const;
    /// The exit code if it has ended (collects it), else nullopt.
    std::optional<int> poll();
    /// The exit code once it ends, or nullopt if it is still running after
    /// `limit` (it is left running).
    std::optional<int> wait_for(std::chrono::milliseconds limit);
    /// Closes its stdin and waits up to `deadline` for the end; a child still
    /// running then is killed (Outcome::timed_out, code -1). The Outcome holds
    /// all its captured output.
    Outcome finish(std::chrono::milliseconds deadline = std::chrono::seconds(30));
    /// finish() within `timeout`, failing the test if the child had to be
    /// killed.
    Outcome wait(std::chrono::milliseconds timeout = std::chrono::seconds(20));
    /// What it wrote to stdout / stderr so far ("" unless captured in a file).
    std::string out() const;
    std::string err() const;
    /// The next line of its stdout (pipe_stdout) without the newline; nullopt
    /// at end of file or after `deadline`.
    std::optional<std::string> read_line(
        std::chrono::milliseconds deadline = std::chrono::seconds(30));
    /// Writes a line to its stdin (pipe_stdin); nothing if it has gone.
    void write_line(const std::string& line);

  private:
    Process() = default;
    void kill_now() const;

    std::string name_;  // argv[0], for messages
    pid_t pid_ = -1;
    bool own_group_ = false;
    std::optional<int> code_;
    int in_ = -1, out_ = -1;
    std::string buffer_;             // read from the stdout pipe, not yet returned
    std::vector<std::string> made_;  // files to remove at the end
    std::string out_path_, err_path_;
};

/// Runs `argv` to its end, killing it after `deadline`: Process(argv, env,
/// how).finish(deadline).
Outcome run(const std::vector<std::string>& argv, const Env& env = {}, const SpawnOptions& how = {},
            std::chrono::milliseconds deadline = std::chrono::seconds(60));

/// Runs `body(i)` in `n` forked children (Process::fork); returns their exit
/// codes (a child killed by signal s reports 128+s; one still running after
/// `timeout` is killed and reports -1). `body`'s return value is the exit
/// code.
std::vector<int> run_children(int n, const std::function<int(int)>& body,
                              std::chrono::milliseconds timeout = std::chrono::seconds(180));

}  // namespace sqlock_test
