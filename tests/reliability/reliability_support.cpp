#include "reliability_support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace reliability {

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The environment for a child: ours, with `changes` applied.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& changes) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
        std::string kv = *e;
        std::size_t eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : changes) {
        if (v.empty())
            env.erase(k);
        else
            env[k] = v;
    }
    std::vector<std::string> out;
    for (const auto& [k, v] : env) out.push_back(k + "=" + v);
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

[[noreturn]] void exec_child(const ExecArgs& args) {
    execve(args.argv[0], args.argv.data(), args.envp.data());
    const char msg[] = "exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    _exit(127);
}

int decode_status(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits for `pid` up to `deadline`, then kills it.
int wait_or_kill(pid_t pid, std::chrono::steady_clock::time_point deadline, bool* timed_out) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const auto code = sqlock_test::wait_child(pid, std::max(left, std::chrono::milliseconds(0)));
    if (!code) *timed_out = true;
    return code.value_or(-1);
}

}  // namespace

std::string dump_table(const sqlock_test::Database& db) {
    const auto dump_sql = sqlock_test::backend_context().hooks.table_dump_sql;
    if (!dump_sql)
        throw std::logic_error(sqlock_test::backend() +
                               ": no table_dump_sql hook (call have_table_dump() first)");
    const sqlock_test::BackendHooks::TableDumpSql sql = dump_sql(db.table);
    std::string out;
    for (const auto& row : query(db, sql.definition)) {
        out += "definition:";
        for (const auto& cell : row) out += " " + cell.value_or("<null>");
        out += "\n";
    }
    for (const auto& row : query(db, sql.rows)) {
        for (const auto& cell : row) out += (cell ? "[" + *cell + "]" : "NULL") + " ";
        out += "\n";
    }
    return out;
}

bool have_table_dump() {
    if (sqlock_test::backend_context().hooks.table_dump_sql) return true;
    sqlock_test::skip_test("comparing the lock table: no table_dump_sql hook");
    return false;
}

std::string with_user(const std::string& pg_url, const std::string& user) {
    std::size_t start = pg_url.find("://");
    if (start == std::string::npos) return pg_url;
    start += 3;
    std::size_t colon = pg_url.find(':', start);
    return pg_url.substr(0, start) + user + pg_url.substr(colon);
}

std::string password_of(const std::string& url) {
    std::size_t start = url.find("://");
    if (start == std::string::npos) return {};
    start += 3;
    std::size_t at = url.find('@', start);
    std::size_t colon = url.find(':', start);
    if (at == std::string::npos || colon == std::string::npos || colon > at) return {};
    return url.substr(colon + 1, at - colon - 1);
}

long env_long(const char* name, long fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    return std::strtol(v, nullptr, 10);
}

Outcome run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            const std::string& input, std::chrono::milliseconds deadline) {
    const std::string base = sqlock_test::scratch_dir() + "/run-" + std::to_string(getpid()) + "-";
    static int counter = 0;
    const std::string n = std::to_string(++counter);
    const std::string in_path = base + n + ".in", out_path = base + n + ".out",
                      err_path = base + n + ".err";
    {
        std::ofstream in(in_path, std::ios::binary);
        in << input;
    }
    ExecArgs args(argv, child_environment(env));
    pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::execs);
    if (pid == 0) {
        // Files, not pipes: nothing can block on a full pipe, and a hung
        // program still leaves what it printed for the failure message.
        int in = open(in_path.c_str(), O_RDONLY);
        int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        exec_child(args);
    }
    Outcome o;
    o.status = wait_or_kill(pid, std::chrono::steady_clock::now() + deadline, &o.timed_out);
    o.out = read_file(out_path);
    o.err = read_file(err_path);
    unlink(in_path.c_str());
    unlink(out_path.c_str());
    unlink(err_path.c_str());
    return o;
}

Child::Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    static int counter = 0;
    err_path_ = sqlock_test::scratch_dir() + "/child-" + std::to_string(getpid()) + "-" +
                std::to_string(++counter) + ".err";
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0 || pipe2(from_child, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    ExecArgs args(argv, child_environment(env));
    pid_ = sqlock_test::fork_child(sqlock_test::child_work::execs);
    if (pid_ == 0) {
        int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        dup2(err, 2);
        exec_child(args);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
    signal(SIGPIPE, SIG_IGN);  // a child that died must not kill the test on write
}

Child::~Child() {
    if (!done_) finish(5s);
    unlink(err_path_.c_str());
}

std::optional<std::string> Child::read_line(std::chrono::milliseconds deadline) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    for (;;) {
        std::size_t nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            return line;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            until - std::chrono::steady_clock::now());
        if (left <= 0ms || out_ < 0) return std::nullopt;
        pollfd p{out_, POLLIN, 0};
        int r = poll(&p, 1, static_cast<int>(left.count()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return std::nullopt;
        char buf[4096];
        ssize_t n = ::read(out_, buf, sizeof buf);
        if (n <= 0) return std::nullopt;
        buffer_.append(buf, static_cast<std::size_t>(n));
    }
}

void Child::write_line(const std::string& line) {
    std::string data = line + "\n";
    if (in_ >= 0 && ::write(in_, data.data(), data.size()) < 0) {
        // The child is gone; finish() reports how it ended.
    }
}

Outcome Child::finish(std::chrono::milliseconds deadline) {
    if (done_) return outcome_;
    done_ = true;
    if (in_ >= 0) close(in_);
    in_ = -1;
    outcome_.status =
        wait_or_kill(pid_, std::chrono::steady_clock::now() + deadline, &outcome_.timed_out);
    char buf[4096];
    ssize_t n;
    while (out_ >= 0 && (n = ::read(out_, buf, sizeof buf)) > 0)
        buffer_.append(buf, static_cast<std::size_t>(n));
    if (out_ >= 0) close(out_);
    out_ = -1;
    outcome_.out = buffer_;
    outcome_.err = read_file(err_path_);
    return outcome_;
}

bool under_sanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#else
    return false;
#endif
#else
    return false;
#endif
}

}  // namespace reliability
