// sqlock-bench-probe CMD [ARGS...]: runs CMD (looked up in PATH; stdin and
// stdout on /dev/null, stderr inherited) and prints one line on stdout:
// "<wall ns> <peak RSS KiB> <wait status>".
//
// Why a separate program: a process's peak resident set (ru_maxrss) keeps
// the peak of the memory it had before execve. A child forked from
// sqlock-bench starts with a copy of the benchmark's heap (about 3 MiB), and
// a posix_spawn child shares it, so either way a small command's peak would
// be the benchmark's. Forked from this small program instead, the command's
// own peak shows. Plain POSIX, no C++ library: the probe stays small.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace {

long long now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fputs("usage: sqlock-bench-probe CMD [ARGS...]\n", stderr);
        return 2;
    }
    const long long start = now_ns();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("sqlock-bench-probe: fork");
        return 1;
    }
    if (pid == 0) {
        const int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execvp(argv[1], argv + 1);
        std::perror("sqlock-bench-probe: exec");
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
    const long long wall = now_ns() - start;
    std::printf("%lld %ld %d\n", wall, usage.ru_maxrss, status);
    return 0;
}
