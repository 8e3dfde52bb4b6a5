#include "child_command.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <tuple>

extern char** environ;

namespace sqlock_bench {

CommandRun run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    // The command is started by sqlock-bench-probe (probe_main.cpp), which
    // times it and reports its own peak memory on a pipe.
    std::vector<char*> args{const_cast<char*>(SQLOCK_BENCH_PROBE)};
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    int err[2], out[2];
    if (pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(err[0]);
        close(err[1]);
        throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    std::fflush(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(err[1]);
    close(out[1]);
    if (rc != 0) {
        close(err[0]);
        close(out[0]);
        throw std::runtime_error(std::string("cannot run " SQLOCK_BENCH_PROBE ": ") +
                                 std::strerror(rc));
    }
    CommandRun run;
    // stderr first, to its end (the probe and the command both hold it);
    // the probe's one line on stdout fits in the pipe meanwhile.
    std::string report;
    for (auto [fd, text, limit] :
         {std::tuple<int, std::string*, std::size_t>{err[0], &run.stderr_text, 4096},
          {out[0], &report, 256}}) {
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) != 0) {
            if (n < 0) {
                if (errno == EINTR) continue;
                break;
            }
            if (text->size() < limit) text->append(buf, static_cast<std::size_t>(n));
        }
        close(fd);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    long long wall_ns = 0;
    long maxrss = 0;
    int command_status = 0;
    if (status != 0 ||
        std::sscanf(report.c_str(), "%lld %ld %d", &wall_ns, &maxrss, &command_status) != 3)
        throw std::runtime_error("sqlock-bench-probe failed: " + run.stderr_text);
    run.wall_ms = static_cast<double>(wall_ns) / 1e6;
    run.maxrss_kib = maxrss;
    run.exit_code =
        WIFEXITED(command_status) ? WEXITSTATUS(command_status) : 128 + WTERMSIG(command_status);
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
