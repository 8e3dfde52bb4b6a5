#include "acquisition.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "exit_codes.hpp"
#include "lock_format.hpp"
#include "signals.hpp"

namespace sqlock_cli {
namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds slice{500};

std::string elapsed(clock::time_point since) {
    auto d = std::chrono::duration_cast<milliseconds>(clock::now() - since);
    return sqlock::format_duration(d / 1000 * 1000);  // whole seconds read better
}

// The "waiting for ..." line on stderr: rewritten in place on a terminal,
// one line per update otherwise.
class WaitProgress {
  public:
    explicit WaitProgress(const Output& out)
        : terminal_(::isatty(STDERR_FILENO) == 1),
          enabled_(!out.quiet() && (terminal_ || out.verbose())),
          every_(terminal_ ? milliseconds(2000) : milliseconds(5000)) {}

    ~WaitProgress() { clear(); }

    bool due() const { return enabled_ && (!shown_ || clock::now() - last_ >= every_); }

    void show(const std::string& message) {
        if (!enabled_) return;
        std::string line = "sqlock: " + one_line(message);
        if (terminal_) {
            struct winsize ws {};
            if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
                line.size() >= ws.ws_col)
                line = line.substr(0, ws.ws_col - 4) + "...";
            write_all(STDERR_FILENO, "\r\033[K" + line);
        } else {
            write_all(STDERR_FILENO, line + "\n");
        }
        shown_ = true;
        last_ = clock::now();
    }

    // Removes the line from the terminal, so that what follows starts clean.
    void clear() {
        if (terminal_ && shown_) write_all(STDERR_FILENO, "\r\033[K");
        shown_ = false;
    }

  private:
    bool terminal_;
    bool enabled_;
    milliseconds every_;
    bool shown_ = false;
    clock::time_point last_;
};

// One attempt, waiting up to `wait`; nullopt when still held.
std::optional<sqlock::Lock> attempt(sqlock::Locker& locker, const AcquireRequest& request,
                                    sqlock::duration wait) {
    sqlock::LockOptions options = request.options;
    options.wait = wait;
    options.wait_forever = false;
    try {
        if (request.slots > 0) return locker.acquire_slot(request.name, request.slots, options);
        return locker.lock(request.name, options);
    } catch (const sqlock::error& e) {
        if (e.category() == sqlock::errc::busy || e.category() == sqlock::errc::timeout)
            return std::nullopt;
        throw;
    }
}

}  // namespace

std::string describe_contention(sqlock::Locker& locker, const std::string& name, int slots) {
    try {
        if (slots == 0) {
            auto info = locker.show(name);
            if (!info) return "lock " + in_quotes(name) + " was just released";
            return holder_sentence(*info);
        }
        // The slot rows are "name#1".."name#N"; the one whose lease ends
        // first is the best guess of when a slot frees up.
        std::optional<sqlock::LockInfo> first;
        for (const auto& row : locker.list(name + "#")) {
            std::string suffix = row.name.substr(name.size() + 1);
            if (suffix.empty() || suffix.find_first_not_of("0123456789") != std::string::npos ||
                suffix.size() > 5 || std::stoi(suffix) > slots)
                continue;
            if (!first || row.seconds_left < first->seconds_left) first = row;
        }
        std::string all = "all " + std::to_string(slots) + " slots of semaphore " +
                          in_quotes(name) + " are taken";
        if (!first) return all;
        return all + "; the first to free: " + holder_sentence(*first);
    } catch (...) {
        // Only for a message: the failure that matters is reported elsewhere.
        return (slots ? "semaphore " : "lock ") + in_quotes(name) + " is held";
    }
}

sqlock::Lock acquire(sqlock::Locker& locker, const AcquireRequest& request, const Output& out,
                     const interruption_check& interrupted) {
    if (request.wait <= sqlock::duration::zero()) {
        // One attempt: the library's busy error names the holder and expiry.
        sqlock::LockOptions options = request.options;
        options.wait = sqlock::duration::zero();
        if (request.slots > 0) return locker.acquire_slot(request.name, request.slots, options);
        return locker.lock(request.name, options);
    }

    const auto start = clock::now();
    const auto deadline = start + request.wait;
    const std::string db = at_database(locker.url());
    WaitProgress progress(out);
    if (auto lock = attempt(locker, request, sqlock::duration::zero())) return std::move(*lock);
    for (;;) {
        if (int signo = interrupted ? interrupted() : 0) {
            progress.clear();
            throw cli_error(exit_code::signal_base + signo,
                            "interrupted by " + signal_name(signo) + " while waiting for " +
                                (request.slots ? "semaphore " : "lock ") + in_quotes(request.name) +
                                db);
        }
        const auto now = clock::now();
        if (now >= deadline) {
            progress.clear();
            throw sqlock::error(sqlock::errc::timeout,
                                "gave up after waiting " + sqlock::format_duration(request.wait) +
                                    ": " +
                                    describe_contention(locker, request.name, request.slots) + db);
        }
        if (progress.due())
            progress.show(
                "waiting up to " + sqlock::format_duration(request.wait) + " (" + elapsed(start) +
                " so far): " + describe_contention(locker, request.name, request.slots) + db);
        auto wait = std::min<clock::duration>(slice, deadline - now);
        if (auto lock = attempt(locker, request, std::chrono::duration_cast<milliseconds>(wait)))
            return std::move(*lock);
    }
}

}  // namespace sqlock_cli
