#include "cli_harness.hpp"

#include <fcntl.h>
#include <pty.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>

namespace cli_test {
namespace {

std::atomic<int> counter{0};

Process spawn(const args_t& args, const env_t& env, const SpawnOptions& how = {},
              const std::string& host = {}) {
    args_t argv;
    if (!host.empty())
        argv = {"/usr/bin/unshare", "-u", "/bin/sh", "-c", "hostname \"$0\" && exec \"$@\"", host};
    argv.push_back(SQLOCK_CLI_PATH);
    argv.insert(argv.end(), args.begin(), args.end());
    env_t all = env;
    // Never inherit these from the developer's shell (emplace: a test's own
    // value wins).
    all.emplace("SQLOCK_DB", std::nullopt);
    all.emplace("SQLOCK_TOKEN", std::nullopt);
    return Process(argv, all, how);
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
    return spawn(with_table(*this, args), with_db(*this, env), {}, host);
}

Process Cli::start(const args_t& args, const env_t& env, const SpawnOptions& how) const {
    return spawn(with_table(*this, args), with_db(*this, env), how, host);
}

Result Cli::bare(const args_t& args, const env_t& env) const {
    env_t all = env;
    if (!all.count("SQLOCK_DB")) all["SQLOCK_DB"] = std::nullopt;
    return spawn(args, all).wait();
}

Cli fresh_cli() {
    return Cli{sqlock_test::fresh_database()};
}

Cli on_host(const Cli& cli, const std::string& host) {
    Cli other = cli;
    other.host = host;
    return other;
}

bool can_name_hosts() {
    static const bool works =
        sqlock_test::run({"/usr/bin/unshare", "-u", "/bin/sh", "-c", "hostname sqlock-probe"})
            .code == 0;
    return sqlock_test::have_tool(works, "unshare -u (root or user namespaces, to name hosts)");
}

std::string make_dir() {
    std::string dir = sqlock_test::scratch_dir() + "/cli-" + std::to_string(getpid()) + "-" +
                      std::to_string(++counter);
    std::filesystem::create_directories(dir);
    return dir;
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

args_t with_command(args_t args, const args_t& command) {
    args.push_back("--");
    args.insert(args.end(), command.begin(), command.end());
    return args;
}

args_t run_args(const std::string& name, const args_t& options, const args_t& command) {
    args_t args = {"run", name};
    args.insert(args.end(), options.begin(), options.end());
    return with_command(args, command);
}

nlohmann::json show_json(const Cli& cli, const std::string& name) {
    Result r = cli({"show", name, "--json"});
    if (r.code != 0) return nullptr;
    return nlohmann::json::parse(r.out);
}

void check_one_line_error(const Result& r) {
    CHECK(r.err_lines() == 1);
    CHECK_THAT(r.err, Catch::Matchers::StartsWith("sqlock: "));
    CHECK(r.out.empty());
}

std::size_t display_columns(const std::string& text) {
    std::size_t n = 0;
    for (const char byte : text) {
        const auto c = static_cast<unsigned char>(byte);
        if ((c & 0xC0) == 0x80) continue;  // continuation byte
        n += (c >= 0xE4 && c <= 0xE9) ? 2 : 1;
    }
    return n;
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
