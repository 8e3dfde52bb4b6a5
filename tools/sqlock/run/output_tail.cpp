#include "run/output_tail.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

namespace sqlock_cli {
namespace {

void write_all(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;  // a closed reader: the output is dropped, as it would be
        data += w;
        n -= static_cast<std::size_t>(w);
    }
}

}  // namespace

OutputTail::~OutputTail() {
    stop();
}

void OutputTail::open() {
    int fds[2][2];
    for (int i = 0; i < 2; ++i)
        if (::pipe2(fds[i], O_CLOEXEC) != 0) {
            const int err = errno;
            if (i == 1) ::close(fds[0][0]), ::close(fds[0][1]);
            throw std::system_error(err, std::generic_category(), "making a pipe for the output");
        }
    for (int i = 0; i < 2; ++i) {
        read_[i] = fds[i][0];
        write_[i] = fds[i][1];
        // Kept out of the job (close-on-exec): it must not hold them open.
        saved_[i] = ::fcntl(STDOUT_FILENO + i, F_DUPFD_CLOEXEC, 3);
    }
    thread_ = std::thread([this] { copy(); });
}

void OutputTail::redirect() {
    // Without close-on-exec: the job's stdout and stderr.
    for (int i = 0; i < 2; ++i) ::dup2(write_[i], STDOUT_FILENO + i);
}

void OutputTail::restore() {
    for (int i = 0; i < 2; ++i)
        if (saved_[i] >= 0) ::dup2(saved_[i], STDOUT_FILENO + i);
}

void OutputTail::copy() {
    char buffer[16384];
    for (;;) {
        pollfd p[2] = {{read_[0], POLLIN, 0}, {read_[1], POLLIN, 0}};
        if (read_[0] < 0 && read_[1] < 0) return;
        const int ready = ::poll(p, 2, 100);
        if (ready < 0 && errno == EINTR) continue;
        // Asked to stop and nothing left to read (the write ends are ours
        // until then, and a process that survived SIGKILL may hold them).
        if (ready <= 0) {
            if (stopping_) return;
            continue;
        }
        for (int i = 0; i < 2; ++i) {
            if (read_[i] < 0 || p[i].revents == 0) continue;
            const ssize_t n = ::read(read_[i], buffer, sizeof buffer);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ::close(read_[i]);
                read_[i] = -1;
                continue;
            }
            write_all(saved_[i], buffer, static_cast<std::size_t>(n));
            std::lock_guard<std::mutex> guard(mutex_);
            tail_.append(buffer, static_cast<std::size_t>(n));
            if (tail_.size() > limit_) tail_.erase(0, tail_.size() - limit_);
        }
    }
}

void OutputTail::stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
    for (int i = 0; i < 2; ++i) {
        for (int* fd : {&read_[i], &write_[i], &saved_[i]})
            if (*fd >= 0) ::close(*fd), *fd = -1;
    }
}

std::string OutputTail::text() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return tail_;
}

std::string write_temporary_file(const std::string& text) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/sqlock-output-XXXXXX";
    const int fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd < 0) return "";
    write_all(fd, text.data(), text.size());
    ::close(fd);
    return path;
}

}  // namespace sqlock_cli
