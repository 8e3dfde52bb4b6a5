#include "cli_harness.hpp"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace cli_test {
namespace {

std::atomic<int> counter{0};

int decode(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

// The signals whose disposition sqlock looks at: a test's child starts with
// each at its default unless the test asks for it to be ignored, whatever the
// test runner's own disposition was.
constexpr int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE};

Process spawn(const args_t& args, const env_t& env, const SpawnOptions& how = {}) {
    const std::string dir = make_dir();
    const std::string out = dir + "/stdout", err = dir + "/stderr";
    // Built before fork(): the child of a threaded test process may only make
    // async-signal-safe calls.
    std::vector<std::string> argv_s{SQLOCK_CLI_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
        std::string entry = *e;
        std::string name = entry.substr(0, entry.find('='));
        // Never inherit these from the developer's shell.
        if (env.count(name) || name == "SQLOCK_DB" || name == "SQLOCK_TOKEN") continue;
        env_s.push_back(entry);
    }
    for (const auto& [name, value] : env)
        if (value) env_s.push_back(name + "=" + *value);
    std::vector<char*> argv, envp;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    // A pipe whose reading end is closed before sqlock starts: the first
    // write to it fails (EPIPE, or SIGPIPE) with no race against a reader.
    int broken_pipe = -1;
    if (how.stdout_broken_pipe) {
        int ends[2];
        REQUIRE(pipe2(ends, O_CLOEXEC) == 0);
        close(ends[0]);
        broken_pipe = ends[1];
    }
    const std::string out_target = how.stdout_path.empty() ? out : how.stdout_path;

    // The child only execs; it dies with the test (PR_SET_PDEATHSIG).
    pid_t pid = sqlock_test::fork_child(sqlock_test::child_work::execs);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        int o = broken_pipe >= 0 ? broken_pipe
                                 : open(out_target.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = how.stderr_fd >= 0 ? how.stderr_fd
                                   : open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || o < 0 || e < 0) _exit(200);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        // Catch2 may have changed signal handling; sqlock gets a clean slate.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        struct sigaction action {};
        sigemptyset(&action.sa_mask);
        action.sa_handler = SIG_DFL;
        for (int s : handled_signals) sigaction(s, &action, nullptr);
        action.sa_handler = SIG_IGN;
        for (int s : how.ignored_signals) sigaction(s, &action, nullptr);
        execve(argv[0], argv.data(), envp.data());
        _exit(201);
    }
    if (broken_pipe >= 0) close(broken_pipe);
    return Process(pid, out, err);
}

}  // namespace

Pty::Pty() {
    // Wide enough that sqlock never shortens its line to fit.
    struct winsize size {};
    size.ws_row = 24;
    size.ws_col = 1000;
    REQUIRE(openpty(&master_, &slave_, nullptr, nullptr, &size) == 0);
    fcntl(master_, F_SETFD, FD_CLOEXEC);
    fcntl(slave_, F_SETFD, FD_CLOEXEC);  // dup2() onto stderr clears it there
    fcntl(master_, F_SETFL, fcntl(master_, F_GETFL) | O_NONBLOCK);
}

Pty::~Pty() {
    close_slave();
    if (master_ >= 0) close(master_);
}

void Pty::close_slave() {
    if (slave_ >= 0) close(slave_);
    slave_ = -1;
}

const std::string& Pty::text() {
    char buf[4096];
    for (;;) {
        ssize_t n = read(master_, buf, sizeof buf);
        if (n > 0) {
            text_.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        return text_;  // EAGAIN: nothing more now; EIO: the terminal side is closed
    }
}

int Result::err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    if (!err.empty() && err.back() != '\n') ++n;
    return n;
}

Process::Process(pid_t pid, std::string out_path, std::string err_path)
    : pid_(pid), out_path_(std::move(out_path)), err_path_(std::move(err_path)) {}

Process::Process(Process&& other) noexcept
    : pid_(other.pid_),
      code_(other.code_),
      out_path_(std::move(other.out_path_)),
      err_path_(std::move(other.err_path_)) {
    other.pid_ = -1;
}

Process::~Process() {
    if (pid_ > 0 && !code_) {
        kill(pid_, SIGKILL);
        sqlock_test::wait_child(pid_, std::chrono::seconds(10));
    }
}

void Process::signal(int signo) const {
    kill(pid_, signo);
}

std::optional<int> Process::poll() {
    if (code_) return code_;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) code_ = decode(status);
    return code_;
}

Result Process::wait(std::chrono::milliseconds timeout) {
    bool ended = sqlock_test::eventually([&] { return poll().has_value(); }, timeout);
    if (!ended) {
        kill(pid_, SIGKILL);
        sqlock_test::wait_child(pid_, std::chrono::seconds(10));
        code_ = -1;
        FAIL("sqlock did not end within " << timeout.count() << " ms; stderr: " << err());
    }
    return Result{*code_, out(), err()};
}

std::string Process::out() const {
    return read_file(out_path_);
}
std::string Process::err() const {
    return read_file(err_path_);
}

static args_t with_table(const Cli& cli, const args_t& args) {
    // First, so that a test's own --table (which comes later) wins.
    args_t all = {"--table", cli.db.table};
    all.insert(all.end(), args.begin(), args.end());
    return all;
}

static env_t with_db(const Cli& cli, const env_t& env) {
    env_t all = env;
    if (!all.count("SQLOCK_DB")) all["SQLOCK_DB"] = cli.db.url;
    return all;
}

Result Cli::operator()(const args_t& args, const env_t& env) const {
    return start(args, env).wait();
}

Process Cli::start(const args_t& args, const env_t& env) const {
    return spawn(with_table(*this, args), with_db(*this, env));
}

Process Cli::start(const args_t& args, const env_t& env, const SpawnOptions& how) const {
    return spawn(with_table(*this, args), with_db(*this, env), how);
}

Result Cli::bare(const args_t& args, const env_t& env) const {
    env_t all = env;
    if (!all.count("SQLOCK_DB")) all["SQLOCK_DB"] = std::nullopt;
    return spawn(args, all).wait();
}

Cli fresh_cli() {
    return Cli{sqlock_test::fresh_database()};
}

std::string make_dir() {
    std::string dir = sqlock_test::scratch_dir() + "/cli-" + std::to_string(getpid()) + "-" +
                      std::to_string(++counter);
    std::filesystem::create_directories(dir);
    return dir;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

bool exists(const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0;
}

void touch(const std::string& path) {
    std::ofstream(path) << "";
}

int count_lines(const std::string& path) {
    std::string text = read_file(path);
    int n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

bool wait_for_file(const std::string& path) {
    return sqlock_test::eventually([&] { return exists(path); });
}

args_t blocking_command(const std::string& witness, const std::string& go) {
    return {"sh", "-c",    "echo $$ >> \"$1\"; while [ ! -e \"$2\" ]; do sleep 0.02; done",
            "sh", witness, go};
}

std::string sqlite_file(const sqlock_test::Database& db) {
    if (sqlock_test::backend() != "sqlite") return "";
    return db.url.substr(std::string("sqlite://").size());
}

std::string database_state(const sqlock_test::Database& db) {
    std::string state;
    if (sqlock_test::backend() == "sqlite") {
        namespace fs = std::filesystem;
        fs::path file = sqlite_file(db);
        for (const auto& entry : fs::directory_iterator(file.parent_path())) {
            std::string name = entry.path().filename().string();
            // The -shm file is SQLite's shared-memory WAL index, rewritten by
            // every reader (read marks); it holds no table data.
            if (name.size() > 4 && name.compare(name.size() - 4, 4, "-shm") == 0) continue;
            if (name.rfind(file.filename().string(), 0) == 0)
                state += name + ":" + read_file(entry.path().string()) + "\n";
        }
        return state;
    }
    for (const auto& row : db.open().list())
        state += row.name + " " + std::to_string(row.id) + " " + row.expires + "\n";
    return state;
}

args_t trapping_command(const std::string& signal_name, const std::string& ready,
                        const std::string& caught) {
    return {"sh",
            "-c",
            "trap 'echo " + signal_name + " > \"$2\"; exit 0' " + signal_name +
                "; touch \"$1\"; while :; do sleep 0.02; done",
            "sh",
            ready,
            caught};
}

}  // namespace cli_test
