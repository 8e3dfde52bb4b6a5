#include "child_command.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "clock.hpp"

extern char** environ;

namespace sqlock_bench {

CommandRun run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    // Everything the child needs is built before fork(): after it, only
    // async-signal-safe calls.
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    int err[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");

    std::fflush(nullptr);
    const std::int64_t start = now_ns();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(err[1], 2);
        execvpe(args[0], args.data(), envp.data());
        const char msg[] = "exec failed\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    close(err[1]);
    CommandRun run;
    char buf[4096];
    ssize_t n;
    while ((n = read(err[0], buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (run.stderr_text.size() < 4096) run.stderr_text.append(buf, static_cast<std::size_t>(n));
    }
    close(err[0]);
    int status = 0;
    rusage usage{};
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    run.wall_ms = (now_ns() - start) / 1e6;
    run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    run.maxrss_kib = usage.ru_maxrss;
    return run;
}

std::vector<std::string> environment_with(const std::vector<std::string>& drop,
                                          const std::vector<std::string>& add) {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        std::string entry = *e;
        std::string name = entry.substr(0, entry.find('='));
        bool dropped = false;
        for (const auto& d : drop) dropped = dropped || d == name;
        if (!dropped) out.push_back(entry);
    }
    out.insert(out.end(), add.begin(), add.end());
    return out;
}

long current_rss_kib() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    return 0;
}

}  // namespace sqlock_bench
