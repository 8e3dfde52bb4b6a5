#include "private_server.hpp"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "test_support.hpp"

namespace reliability {

using namespace std::chrono_literals;

namespace {

// `script COMMAND DIR ARGS...`, within `bound`.
sqlock_test::Outcome server_script(const std::string& script, const std::string& command,
                                   const std::string& dir, const std::vector<std::string>& args,
                                   const sqlock_test::Env& env, std::chrono::milliseconds bound) {
    std::vector<std::string> argv{"/bin/sh", "-c", "exec \"$0\" \"$@\"", script, command, dir};
    argv.insert(argv.end(), args.begin(), args.end());
    return sqlock_test::run(argv, env, {}, bound);
}

}  // namespace

PrivateServer::PrivateServer(const std::string& script, bool hostile)
    : script_(script), hostile_(hostile) {
    char tmpl[] = "/tmp/sqlock-private-server-XXXXXX";
    REQUIRE(mkdtemp(tmpl));
    dir_ = tmpl;
    sqlock_test::Env env;
    if (hostile_) env["SQLOCK_TEST_SERVER_DEFAULTS"] = "hostile";
    auto r = server_script(script_, "start", dir_, {}, env, 120s);
    INFO(r.err);
    REQUIRE(r.code == 0);
    url_ = r.out.substr(0, r.out.find('\n'));
    // The server's main process, asked once: it stays the same until it is
    // halted, and a fault is applied the moment the test says.
    auto pid = server_script(script_, "pid", dir_, {}, {}, 30s);
    std::istringstream in(pid.out);
    if (pid.code != 0 || !(in >> server_pid_) || server_pid_ <= 0) {
        stop();  // the destructor does not run when the constructor throws
        FAIL("no server pid from " << script_ << " pid");
    }
}

PrivateServer::~PrivateServer() {
    signal(SIGCONT);
    stop();
}

void PrivateServer::signal(int signo) {
    if (server_pid_ <= 0) return;
    const int postmaster = server_pid_;
    std::vector<int> all{postmaster};
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string stat = sqlock_test::read_file(entry.path().string() + "/stat");
        auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 2));
        char state;
        int ppid = 0;
        if (rest >> state >> ppid && ppid == postmaster) all.push_back(std::stoi(name));
    }
    if (signo == SIGSTOP) std::reverse(all.begin(), all.end());  // postmaster last
    for (int pid : all) ::kill(pid, signo);
}

void PrivateServer::halt() {
    halted_ = true;
    REQUIRE(run("halt") == 0);
    server_pid_ = 0;
}

void PrivateServer::start() {
    REQUIRE(run("start") == 0);
    halted_ = false;
    auto pid = server_script(script_, "pid", dir_, {}, {}, 30s);
    std::istringstream in(pid.out);
    REQUIRE(pid.code == 0);
    REQUIRE((in >> server_pid_));
}

void PrivateServer::set(const std::string& name, const std::string& value) {
    if (std::find(settings_.begin(), settings_.end(), name) == settings_.end())
        settings_.push_back(name);
    REQUIRE(run("set", {name, value}) == 0);
}

void PrivateServer::recover() {
    if (halted_) start();
    for (const std::string& name : settings_) REQUIRE(run("set", {name, "DEFAULT"}) == 0);
    settings_.clear();
}

int PrivateServer::run(const std::string& command, const std::vector<std::string>& args) {
    sqlock_test::Env env;
    if (hostile_) env["SQLOCK_TEST_SERVER_DEFAULTS"] = "hostile";
    auto r = server_script(script_, command, dir_, args, env, 120s);
    INFO(script_ << " " << command << ": " << r.err);
    CHECK(r.code == 0);
    return r.code;
}

void PrivateServer::stop() {
    server_script(script_, "stop", dir_, {}, {}, 120s);
}

}  // namespace reliability
