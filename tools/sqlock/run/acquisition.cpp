#include "run/acquisition.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/signal_name.hpp"
#include "sqlock/leadership.hpp"
#include "text.hpp"

namespace sqlock_cli {

void apply_shared_option(const cxxopts::ParseResult& options, AcquireRequest& request) {
    if (options.count("shared") == 0) return;
    if (options.count("slots"))
        throw usage_error("--shared takes a plain lock; a semaphore's slots are each one holder's");
    request.options.mode = sqlock::lock_mode::shared;
}

const char* mode_name(sqlock::lock_mode mode) {
    return mode == sqlock::lock_mode::shared ? "shared" : "exclusive";
}
namespace {

using clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds slice{500};

// The longest prefix of `line` that is at most `room` columns wide, ending
// in "..." (never splitting a UTF-8 sequence).
std::string cut_to_width(const std::string& line, std::size_t room) {
    if (room <= 3) return std::string(room, '.');
    std::string out;
    std::size_t i = 0;
    while (i < line.size()) {
        std::size_t len = sqlock::text::utf8_sequence_length(line, i);
        if (len == 0) len = 1;
        std::string next = out + line.substr(i, len);
        if (display_width(next) > room - 3) break;
        out = std::move(next);
        i += len;
    }
    return out + "...";
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

    // `lines`: the same message, longest first. On a terminal the longest
    // that fits its width is shown (the last one cut if none does), so the
    // line never wraps, which would break rewriting it in place.
    void show(const std::vector<std::string>& lines) {
        if (!enabled_ || lines.empty()) return;
        if (terminal_) {
            std::string line = "sqlock: " + one_line(lines.front());
            struct winsize ws {};
            if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1) {
                const std::size_t room = ws.ws_col - 1u;  // the cursor needs a column
                for (const auto& candidate : lines) {
                    line = "sqlock: " + one_line(candidate);
                    if (display_width(line) <= room) break;
                }
                if (display_width(line) > room) line = cut_to_width(line, room);
            }
            write_all(STDERR_FILENO, "\r\033[K" + line);
        } else {
            write_all(STDERR_FILENO, "sqlock: " + one_line(lines.front()) + "\n");
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

}  // namespace

namespace {

std::string contention_sentence(const std::optional<sqlock::LockInfo>& row, const std::string& name,
                                int slots) {
    if (slots == 0) {
        if (!row) return "lock " + in_quotes(name) + " was just released";
        return holder_sentence(*row);
    }
    std::string all = slots == 1 ? "the only slot of semaphore " + in_quotes(name) + " is taken"
                                 : "all " + std::to_string(slots) + " slots of semaphore " +
                                       in_quotes(name) + " are taken";
    if (!row) return all;
    return all + "; the first to free: " + holder_sentence(*row);
}

// The progress line, longest first: on a narrow terminal the first that
// fits is shown, so the fixed words go before the holder and the time left.
std::vector<std::string> progress_lines(const std::optional<sqlock::LockInfo>& row,
                                        const std::string& name, int slots,
                                        const std::string& waiting, const std::string& db) {
    const std::string sentence = contention_sentence(row, name, slots);
    std::vector<std::string> lines = {waiting + ": " + sentence + db, waiting + ": " + sentence};
    if (row) {
        const std::string holder = describe_holder(*row);
        const std::string left = row->expired() ? "expired" : time_left(*row) + " left";
        lines.push_back(in_quotes(row->name) + " held by " + holder + ", " + left);
        lines.push_back(holder + ", " + left);
        if (row->holder.pid != 0)  // the narrowest: where it runs, and how long it may
            lines.push_back(sqlock::text::printable(row->holder.host) + ":" + pid_text(*row) +
                            ", " + left);
    }
    return lines;
}

}  // namespace

namespace {

// Attempts that meet an obstacle come at most 1 s apart (the wait loop's
// backoff, obstacle_handler): one this much after the last is a new spell.
constexpr sqlock::duration obstacle_gap = std::chrono::milliseconds(1500);

// "the database is read-only; trying again": the progress line's words for
// an obstacle.
std::string obstacle_sentence(const sqlock::error& e) {
    return std::string(e.read_only() ? "the database is read-only"
                                     : "the database cannot be reached or does not answer") +
           "; trying again";
}

// Takes what `take` takes with `options`, waiting in the library's own
// wait loop (woken by releases) while sqlock prints the progress line and
// stays responsive to signals from its hook. `subject` names what is
// waited for in the messages.
template <typename Take>
auto take_waiting(sqlock::Locker& locker, const AcquireRequest& request, const Output& out,
                  const interruption_check& interrupted, const std::string& subject, Take&& take)
    -> decltype(take(std::declval<const sqlock::LockOptions&>())) {
    sqlock::LockOptions options = request.options;
    options.wait = request.wait;
    options.wait_forever = request.wait_forever;
    const bool waits = request.wait_forever || request.wait > sqlock::duration::zero();
    // One attempt: the library's busy error names the holder and expiry.
    if (!waits) return take(options);

    const std::string db = at_database(locker.url());
    const std::string limit = request.wait_forever
                                  ? "without a time limit"
                                  : "up to " + sqlock::format_duration(request.wait);
    WaitProgress progress(out);
    bool wait_started = false;
    // The obstacle met last, and when (the time waited then): the progress
    // hook is told of nobody in the way while the database cannot be
    // asked, and says so for as long as the obstacles keep coming.
    std::optional<sqlock::error> obstacle;
    sqlock::duration obstacle_at{};
    options.on_obstacle = [&](const sqlock::error& e, sqlock::duration waited) {
        const bool new_spell = !obstacle || waited - obstacle_at > obstacle_gap ||
                               obstacle->read_only() != e.read_only();
        obstacle = e;
        obstacle_at = waited;
        if (new_spell && request.on_obstacle) request.on_obstacle(e, waited);
        return true;
    };
    options.on_waiting = [&](const sqlock::LockInfo* holder, sqlock::duration waited) {
        if (!wait_started) {
            wait_started = true;
            if (request.on_wait_start) request.on_wait_start(holder);
        }
        if (int signo = interrupted ? interrupted() : 0) {
            progress.clear();
            throw cli_error(
                exit_code::signal_base + signo,
                "interrupted by " + signal_name(signo) + " while waiting for " + subject + db);
        }
        if (progress.due()) {
            std::optional<sqlock::LockInfo> row;
            if (holder) row = *holder;
            const std::string waiting = "waiting " + limit + " (" +
                                        sqlock::format_duration(waited / 1000 * 1000) + " so far)";
            if (!holder && obstacle && waited - obstacle_at <= obstacle_gap)
                progress.show({waiting + ": " + obstacle_sentence(*obstacle) + db,
                               waiting + ": " + obstacle_sentence(*obstacle)});
            else
                progress.show(progress_lines(row, request.name, request.slots, waiting, db));
        }
        return true;
    };
    options.progress_every = slice;
    try {
        return take(options);
    } catch (...) {
        progress.clear();
        throw;
    }
}

}  // namespace

namespace {

// Takes one name as `take` does, waiting as take_waiting() does; a timeout
// says how long it waited and what was in the way.
template <typename Take>
auto take_one(sqlock::Locker& locker, const AcquireRequest& request, const Output& out,
              const interruption_check& interrupted, Take&& take)
    -> decltype(take(std::declval<const sqlock::LockOptions&>())) {
    const std::string subject = (request.slots ? "semaphore " : "lock ") + in_quotes(request.name);
    try {
        return take_waiting(locker, request, out, interrupted, subject, std::forward<Take>(take));
    } catch (const sqlock::error& e) {
        const bool waited = request.wait_forever || request.wait > sqlock::duration::zero();
        if (!waited || e.category() != sqlock::errc::timeout) throw;
        std::optional<sqlock::LockInfo> row;
        if (e.holder()) row = *e.holder();
        const std::string message =
            "gave up after waiting " + sqlock::format_duration(request.wait) + ": " +
            contention_sentence(row, request.name, request.slots) + at_database(locker.url());
        if (row) throw sqlock::error(sqlock::errc::timeout, message, *row);
        throw sqlock::error(sqlock::errc::timeout, message);
    }
}

}  // namespace

sqlock::Lock acquire(sqlock::Locker& locker, const AcquireRequest& request, const Output& out,
                     const interruption_check& interrupted) {
    return take_one(locker, request, out, interrupted, [&](const sqlock::LockOptions& options) {
        if (request.slots > 0) return locker.acquire_slot(request.name, request.slots, options);
        return locker.lock(request.name, options);
    });
}

sqlock::Leadership campaign(sqlock::Locker& locker, const AcquireRequest& request,
                            const Output& out, const interruption_check& interrupted) {
    return take_one(locker, request, out, interrupted, [&](const sqlock::LockOptions& options) {
        return sqlock::Election(locker, request.name)
            .campaign(request.leader_value.value_or(""), options);
    });
}

sqlock::LockSet acquire_set(sqlock::Locker& locker, const AcquireRequest& request,
                            const Output& out, const interruption_check& interrupted) {
    return take_waiting(
        locker, request, out, interrupted,
        "the lock set of " + std::to_string(request.set.size()) + " names",
        [&](const sqlock::LockOptions& options) { return locker.lock_all(request.set, options); });
}

}  // namespace sqlock_cli
