#include "run/notify.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/signal_name.hpp"
#include "run/child_process.hpp"
#include "sqlock/duration.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

std::string name_of(const std::string& entry) {
    return entry.substr(0, entry.find('='));
}

// The passwords written in `url`, as they are and as libpq would decode
// them: a notification must not be handed either.
std::vector<std::string> passwords_of(const std::string& url) {
    std::vector<std::string> out;
    for (const auto& [begin, end] : sqlock::text::password_ranges(url))
        if (end > begin) out.push_back(url.substr(begin, end - begin));
    return out;
}

}  // namespace

std::vector<std::string> notify_environment(const std::vector<std::string>& extra,
                                            const std::vector<std::string>& db_urls) {
    std::vector<std::string> passwords;
    for (const std::string& url : db_urls)
        for (std::string& p : passwords_of(url)) passwords.push_back(std::move(p));
    // Only what is inherited is filtered: the SQLOCK_* values sqlock adds
    // are its own (a short password must not take them away).
    std::vector<std::string> env;
    for (std::string& entry : command_environment({})) {
        const std::string name = name_of(entry);
        bool added = false;
        for (const std::string& x : extra) added = added || name_of(x) == name;
        if (added || name == "SQLOCK_DB" || name == "PGPASSWORD" || name == "MYSQL_PWD") continue;
        const std::string value = entry.substr(name.size() + 1);
        if (!sqlock::text::password_ranges(value).empty()) continue;
        bool holds = false;
        for (const std::string& p : passwords) holds = holds || value.find(p) != std::string::npos;
        if (!holds) env.push_back(std::move(entry));
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

NotifyResult run_notification(const std::string& command, const std::vector<std::string>& env,
                              std::chrono::milliseconds timeout, const sigset_t& mask) {
    NotifyResult result;
    std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                               const_cast<char*>(command.c_str()), nullptr};
    std::vector<char*> envp;
    for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    posix_spawnattr_init(&attr);
    // Its own group: a timeout kills the shell and whatever it started.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &mask);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    const int err = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
        result.ok = false;
        result.problem = std::string("could not be started: ") + std::strerror(err);
        return result;
    }

    // Polled: SIGCHLD is blocked and taken by the session's own waits, and
    // a notification is seldom, short and bounded.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    bool killed = false;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            result.ok = false;
            result.problem = std::string("could not be collected: ") + std::strerror(errno);
            return result;
        }
        if (!killed && std::chrono::steady_clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(killed ? 1 : 10));
    }
    if (killed) {
        result.ok = false;
        result.problem =
            "did not end within " + sqlock::format_duration(timeout) + " and was killed";
    } else if (WIFEXITED(status)) {
        result.exit_status = WEXITSTATUS(status);
        if (result.exit_status != 0) {
            result.ok = false;
            result.problem = "exited " + std::to_string(result.exit_status);
        }
    } else if (WIFSIGNALED(status)) {
        result.ok = false;
        result.problem = "was killed by " + signal_name(WTERMSIG(status));
    }
    return result;
}

}  // namespace sqlock_cli
