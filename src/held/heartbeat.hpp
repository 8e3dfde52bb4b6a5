// Heartbeat — keeps one lock's lease alive from background threads, and
// knows until when the lock is certainly still held.
//
// valid_until is the time (steady clock) at which the last successful
// renewal, or the acquisition, was *sent*, plus the lease: the database set
// `expires` from its own `now`, which is later than the sending, so the row
// lasts at least that long (as long as the two clocks run at the same rate).
//
// Two threads, so a renewal that hangs can never keep the heartbeat from
// acting: the renewer makes one renewal at a time, each bounded by a
// deadline it passes to the database layer; the timer decides when to ask
// for the next one, warns (on_expiring) `warn_before` ahead of valid_until,
// and declares the lock lost when a renewal finds the row gone or taken over,
// or when valid_until passes without a successful renewal (from then on
// another holder may have it). The timer never waits for the renewer.
//
// Renewals are sent every lease/6, so several fit before valid_until even
// when a holder must stop its work well ahead of it (sqlock run's kill
// grace); a failed one is retried after a third of that.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"
#include "sqlock/options.hpp"

namespace sqlock::detail {

/// Validity
///
/// What this process knows of one held claim's lease: valid_until, until
/// when it is certainly still held by the steady clock, and the expiry the
/// database last gave its rows, as the database's text (Lock::expires()).
/// The renewal sent last decides valid_until: the database keeps the expiry
/// the last executed renewal set, and a renewal with a shorter lease than
/// before shortens it. One mutex for both: a process may hold many locks.
/// Thread-safe.
class Validity {
  public:
    using clock = std::chrono::steady_clock;

    /// A successful acquisition or renewal sent at `sent` with `lease`.
    void granted(clock::time_point sent, duration lease) noexcept {
        std::lock_guard<std::mutex> guard(mutex_);
        if (sent < sent_) return;  // a later-sent renewal has already answered
        sent_ = sent;
        until_ = sent + lease;
    }
    clock::time_point until() const noexcept {
        std::lock_guard<std::mutex> guard(mutex_);
        return until_;
    }

    /// The rows' expiry as the database answered the acquisition or the
    /// renewal that came back last (UTC text, the earliest of the rows').
    void answered(const std::string& expires) {
        std::lock_guard<std::mutex> guard(mutex_);
        expires_ = expires;
    }
    void answered(std::string&& expires) noexcept {
        std::lock_guard<std::mutex> guard(mutex_);
        expires_ = std::move(expires);
    }
    std::string expires() const {
        std::lock_guard<std::mutex> guard(mutex_);
        return expires_;
    }

  private:
    mutable std::mutex mutex_;
    clock::time_point sent_ = clock::time_point::min();
    clock::time_point until_ = clock::time_point::min();
    std::string expires_;
};

class Heartbeat {
  public:
    using clock = std::chrono::steady_clock;

    struct Settings {
        duration lease{};
        duration interval{};         // from one successful renewal's sending to the next
        duration retry{};            // after a failed renewal
        duration attempt_timeout{};  // each renewal gives up after this
        duration warn_before{};      // on_expiring this long before valid_until
    };
    /// The settings for `lease`: interval lease/6, retry a third of that,
    /// each attempt bounded by the interval and by `db_timeout`.
    static Settings settings_for(duration lease, duration db_timeout, duration warn_before);

    /// `renew(deadline)` renews once, giving up by `deadline`: returns false
    /// if the lock is lost, throws on a transient failure. `lost` is called
    /// once when the lock is declared lost, `expiring(valid_until)` once per
    /// valid_until that comes within warn_before with no renewal (either may
    /// be empty), `renewed_late(failures, left)` from the renewer thread
    /// when a renewal succeeds after `failures` failed ones, `left` before
    /// valid_until when it was sent (may be empty). `validity` is read and
    /// updated here (renewals made elsewhere may update it too).
    Heartbeat(Settings settings, Validity& validity, std::function<bool(clock::time_point)> renew,
              std::function<void()> lost, std::function<void(clock::time_point)> expiring,
              std::function<void(int, duration)> renewed_late = {});
    ~Heartbeat();  // stops and joins

    /// Why the renewals have been failing: the error of the last one, when
    /// it failed and none succeeded since (a read-only server, a refused
    /// connection, no answer in time); else nullopt. Thread-safe.
    std::optional<error> last_failure() const;

    /// Stops both threads and joins them. The renewer is joined after at
    /// most its current attempt's deadline.
    void stop() noexcept;
    /// In a forked child the threads do not exist: forget them without joining.
    void abandon() noexcept;

  private:
    enum class outcome { none, renewed, gone, failed };

    void run_timer();
    void run_renewer();

    Settings settings_;
    Validity& validity_;
    std::function<bool(clock::time_point)> renew_;
    std::function<void()> lost_;
    std::function<void(clock::time_point)> expiring_;
    std::function<void(int, duration)> renewed_late_;

    mutable std::mutex mutex_;
    std::condition_variable cv_;
    std::optional<error> last_failure_;  // since the last renewal that succeeded
    bool stopping_ = false;
    bool requested_ = false;  // the timer asks the renewer for one renewal
    bool busy_ = false;       // the renewer is renewing
    outcome result_ = outcome::none;
    clock::time_point result_sent_{};
    std::thread timer_;
    std::thread renewer_;
};

/// The heartbeat a held lock or lock set is given, as `o` asks (null when
/// o.heartbeat is off): it renews by `renew`, declares the hold lost by
/// `lost`, and tells o.on_expiring and o.on_renewed_late `name` and `id`
/// (a handler that throws does not end it).
std::unique_ptr<Heartbeat> heartbeat_for(const LockOptions& o, duration db_timeout,
                                         Validity& validity, std::string name, std::int64_t id,
                                         std::function<bool(Heartbeat::clock::time_point)> renew,
                                         std::function<void()> lost);

}  // namespace sqlock::detail
