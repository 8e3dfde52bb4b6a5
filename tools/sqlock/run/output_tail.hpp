// `run --notify-output`: the job's stdout and stderr pass through sqlock
// (to where they went before) and the last bytes of both, interleaved as
// they came, are kept for the notification.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace sqlock_cli {

/// OutputTail
///
/// spawn() points this process's stdout and stderr at two pipes for as
/// long as `spawn` runs (the job inherits them), then restores them; a
/// thread copies what the pipes carry to the original stdout and stderr,
/// keeping the last `limit` bytes. The job then writes to pipes, not to a
/// terminal. Each attempt of a retried job is spawned the same way, onto
/// the same pipes. stop() ends the copying once the job's processes have
/// ended (what is still buffered is copied first). Not thread-safe apart
/// from that thread; one per run.
///
///     OutputTail tail(64 * 1024);
///     tail.spawn([&] { child = spawn(...); });
///     ... the job ends ...
///     tail.stop();
///     std::string last = tail.text();
class OutputTail {
  public:
    explicit OutputTail(std::size_t limit) : limit_(limit) {}
    ~OutputTail();
    OutputTail(const OutputTail&) = delete;
    OutputTail& operator=(const OutputTail&) = delete;

    /// Calls `spawn` with stdout and stderr on the pipes. Throws
    /// std::system_error if the pipes cannot be made (nothing is spawned).
    template <typename Spawn>
    void spawn(Spawn&& spawn) {
        if (!thread_.joinable()) open();
        redirect();
        try {
            spawn();
        } catch (...) {
            restore();
            throw;
        }
        restore();
    }

    /// Copies what is left and ends the thread; the pipes are closed.
    void stop();

    /// The last `limit` bytes the job wrote (stdout and stderr together).
    std::string text() const;

  private:
    void open();
    void redirect();
    void restore();
    void copy();

    std::size_t limit_;
    int read_[2] = {-1, -1};   // the pipes' read ends: stdout, stderr
    int write_[2] = {-1, -1};  // their write ends, kept for the next attempt
    int saved_[2] = {-1, -1};  // the original stdout and stderr
    std::atomic<bool> stopping_{false};
    std::thread thread_;
    mutable std::mutex mutex_;
    std::string tail_;
};

/// Writes `text` to a new private file under $TMPDIR (else /tmp) and
/// returns its path; "" if it cannot.
std::string write_temporary_file(const std::string& text);

}  // namespace sqlock_cli
