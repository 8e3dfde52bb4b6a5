#include "run/process_tree.hpp"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#ifdef __linux__
#include <sys/prctl.h>
#endif

namespace sqlock_cli {
namespace {

// Parent id and state from /proc/PID/stat ("pid (comm) S ppid ..."); the
// command name may contain spaces and parentheses, so parse after the last ')'.
bool read_stat(pid_t pid, pid_t* ppid, char* state) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE* f = std::fopen(path, "re");
    if (!f) return false;
    char buf[1024];
    std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close = nullptr;
    for (const char* p = buf; *p; ++p)
        if (*p == ')') close = p;
    if (!close) return false;
    int parent = 0;
    if (std::sscanf(close + 1, " %c %d", state, &parent) != 2) return false;
    *ppid = parent;
    return true;
}

std::multimap<pid_t, pid_t> living_by_parent() {
    std::multimap<pid_t, pid_t> children;  // parent -> child
    DIR* proc = ::opendir("/proc");
    if (!proc) return children;
    while (dirent* entry = ::readdir(proc)) {
        char* end = nullptr;
        long pid = std::strtol(entry->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        pid_t ppid = 0;
        char state = 0;
        if (!read_stat(static_cast<pid_t>(pid), &ppid, &state)) continue;  // gone meanwhile
        if (state == 'Z' || state == 'X') continue;  // dead: nothing to signal
        children.emplace(ppid, static_cast<pid_t>(pid));
    }
    ::closedir(proc);
    return children;
}

}  // namespace

bool become_subreaper() noexcept {
#if defined(__linux__) && defined(PR_SET_CHILD_SUBREAPER)
    return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
#else
    return false;
#endif
}

std::vector<pid_t> descendants() {
    const std::multimap<pid_t, pid_t> children = living_by_parent();
    std::vector<pid_t> out;
    std::vector<pid_t> todo{::getpid()};
    while (!todo.empty()) {
        pid_t parent = todo.back();
        todo.pop_back();
        auto range = children.equal_range(parent);
        for (auto it = range.first; it != range.second; ++it) {
            out.push_back(it->second);
            todo.push_back(it->second);
        }
    }
    return out;
}

int signal_children(int signo) noexcept {
    try {
        int n = 0;
        const std::multimap<pid_t, pid_t> children = living_by_parent();
        auto range = children.equal_range(::getpid());
        for (auto it = range.first; it != range.second; ++it)
            if (::kill(it->second, signo) == 0) ++n;
        return n;
    } catch (...) {
        return 0;
    }
}

int signal_job(int signo, pid_t fallback) noexcept {
    try {
        // Any signal but SIGKILL goes to the job as it stood before anything
        // was signalled: a process started after that may be the job's
        // answer to the signal (a SIGTERM trap's clean-up), so it is let
        // run. SIGKILL walks again until nothing new turns up, so a process
        // forked meanwhile is reached too.
        const std::vector<pid_t> before = descendants();
        std::set<pid_t> done;
        if (fallback > 0 && ::kill(fallback, signo) == 0) done.insert(fallback);
        for (pid_t pid : before)
            if (done.insert(pid).second) ::kill(pid, signo);
        for (int round = 0; signo == SIGKILL && round < 5; ++round) {
            bool more = false;
            for (pid_t pid : descendants()) {
                if (!done.insert(pid).second) continue;
                ::kill(pid, signo);
                more = true;
            }
            if (!more) break;
        }
        return static_cast<int>(done.size());
    } catch (...) {
        if (fallback > 0) ::kill(fallback, signo);
        return 1;
    }
}

}  // namespace sqlock_cli
