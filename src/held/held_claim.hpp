// The held side of every acquisition: the rows one claim took (claim.hpp),
// kept under one owner, one lease and one heartbeat, renewed and released
// together, found lost together, and told to the Locker's observer. A Lock
// is a handle over one name's row (a plain lock, a semaphore slot, a shared
// hold), a LockSet over several; both are handles over a HeldClaim, as
// etcd's Mutex and Election are recipes over one key and one lease. The way
// in is the claim's; this is the way out.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/owner.hpp"
#include "contract/claim.hpp"
#include "held/heartbeat.hpp"
#include "sqlock/error.hpp"
#include "sqlock/observer.hpp"
#include "sqlock/options.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

struct Refusal;

/// HeldClaim
///
/// One acquisition's rows while they are held. Made by an acquirer from the
/// rows an attempt took (taken()), handed out once it can be vouched for
/// (hand_out()), then shared by the handle and its heartbeat. Thread safety:
/// the handle's calls come from one thread at a time; the heartbeat's from
/// its own threads: what both touch is atomic or behind `validity`.
struct HeldClaim {
    using clock = std::chrono::steady_clock;

    std::shared_ptr<LockerState> locker;
    /// The rows as held: entries[i]'s row has id ids[i]. A slot's entry is
    /// its row, exclusive (claim.hpp); a set's are its names in bytewise order.
    Claim claim;
    std::vector<std::int64_t> ids;
    /// The names as asked for, where the entries do not say them: a set's
    /// (LockSet::names(), the observer's SetEventNames), a semaphore's
    /// (without "#N"). Null for a plain lock or a shared hold, whose entry
    /// is its name. They live beside this struct, in its allocation
    /// (taken()): a process may hold many locks.
    const std::vector<std::string>* asked = nullptr;
    std::string locked_by;
    std::string token;
    std::string created;  // the first row's, UTC text from the database
    duration lease{};
    duration min_hold{};
    lost_handler on_lost;
    std::thread::id thread;  // the thread that acquired: a Lock's re-entrant holds
    pid_t pid = 0;           // the process that acquired; a forked child must not release
    int depth = 1;           // a Lock's re-entrant nesting, guarded by locker->holds_mutex

    // valid_until and the rows' expiry text (heartbeat.hpp).
    Validity validity;

    // For the observer (sqlock/observer.hpp): when the acquisition was
    // sent, and the renewals that failed in a row since the last one that
    // succeeded. Nothing is told before the claim is handed out.
    clock::time_point acquired_at{};
    std::atomic<int> failed_renewals{0};
    std::atomic<bool> handed_out{false};

    std::atomic<bool> released{false};
    std::atomic<bool> lost{false};
    std::unique_ptr<Heartbeat> heartbeat;

    /// The claim an attempt sent at `sent` took, as `owner`: `rows` are its
    /// entries' rows in the order of the entries; `certain` how long they
    /// certainly last after `sent` (claim.hpp's certain_lease()); `names`
    /// the names asked for where the entries do not say them (else empty).
    /// Takes the owner's strings; give_back() returns them for the next
    /// attempt.
    static std::shared_ptr<HeldClaim> taken(std::shared_ptr<LockerState> locker, Claim held,
                                            std::vector<Row>&& rows, std::vector<std::string> names,
                                            Owner& owner, const LockOptions& o,
                                            clock::time_point sent, duration certain);

    /// The first name as asked for: a lock's name (a semaphore's without
    /// "#N"), a set's first. What the observer and the handlers are told.
    const std::string& name() const noexcept { return name(0); }
    /// The name of entries[i] as asked for.
    const std::string& name(std::size_t i) const noexcept {
        return asked ? (*asked)[i] : claim.entries[i].name;
    }
    /// A set's names, each once, in bytewise order.
    const std::vector<std::string>& names() const noexcept { return *asked; }
    /// A lock's row, its lockstring ("name", "name#N", "name#shared-...").
    const std::string& row() const noexcept { return claim.entries.front().row(); }

    /// Whether the lease can still be vouched for: at least half of it is
    /// left by valid_until, or a renewal sent now renews every row (one
    /// that fails while the rows are still vouched for leaves them so; the
    /// heartbeat takes it from there). False when a row is not ours any
    /// more. Tells nobody: the claim is not, or was just, handed out.
    bool vouch();

    /// Renews every row to `lease` from the database's now, in one round
    /// trip, giving up by `deadline`: the heartbeat's renewal and the
    /// handle's. Tells the observer, counts a failure (which it throws) and
    /// marks the claim lost when a row is not ours any more (false). With
    /// `grant_from`, when the renewal was sent, valid_until moves before the
    /// observer is told (the heartbeat moves it itself).
    bool renew_rows(duration lease, clock::time_point deadline, clock::time_point grant_from = {});
    /// Lock::renew(), LockSet::renew(): renew_rows(), then valid_until
    /// moves; errc::lost when a row is not ours any more.
    void renew(duration lease);
    /// Lock::held(), LockSet::held(): asks the database for each row.
    bool is_held();
    /// Lock::renewal_failure(), LockSet::renewal_failure().
    std::optional<error> renewal_failure() const;

    /// Marks the claim lost and calls on_lost once, for entries[i], and
    /// tells the observer. Never throws.
    void mark_lost(std::size_t i) noexcept;
    /// Stops the heartbeat; a Lock's hold is forgotten by its Locker. Never
    /// throws.
    void stop_managing() noexcept;
    /// Releases every row together (one claim); throws errc::lost naming
    /// those that were not ours, or the failure.
    void release_rows();

    /// "lock 'x' (id 5)", "set of 2 locks ('a' id 4, 'b' id 7)", for messages.
    std::string describe() const;

    ~HeldClaim();

  private:
    /// One renewal of every row, telling nobody; false when a row is not
    /// ours (its index in `missing`). Throws on failure.
    bool renew_once(duration lease, clock::time_point deadline, std::size_t* missing);
    /// Calls `call(observer, set)` when the Locker has an observer: `set`
    /// a set's names and ids, null for one name's claim.
    template <typename Call>
    void tell(Call&& call) const noexcept;
};

/// The end of every attempt that took its rows, written once: vouches for
/// them (an acquisition that took long counts from its sending, and a row
/// claimed again only for what it had left: renew once at once, so that
/// the holder starts with a lease it can vouch for), has the Locker keep a
/// Lock's hold (re-entrancy), then gives it the heartbeat `o` asks for.
/// False when the rows lapsed meanwhile: `refusal` says so, and `owner` has
/// its strings back for the next attempt.
bool hand_out(const std::shared_ptr<HeldClaim>& held, const LockOptions& o, Owner& owner,
              Refusal& refusal);

/// A claim that was taken and then found lapsed before it was handed out
/// (or while it left the line): let go, unreleased, its owner's strings
/// back in `owner`.
void give_back(HeldClaim& held, Owner& owner) noexcept;

/// held.vouch(), with the owner's strings given back when the claim is not
/// ours after all: when it lapsed (false), and when the renewal that would
/// vouch for it failed past its lease (the error, rethrown, may send the
/// caller to another attempt, which needs them).
bool vouch_or_give_back(HeldClaim& held, Owner& owner);

/// A live shared hold of `name` that this thread has through Locker `s`,
/// or null: what an exclusive request of the same name from this thread
/// would wait for. The caller holds s.holds_mutex.
std::shared_ptr<HeldClaim> shared_hold_here(LockerState& s, const std::string& name);

// The handles' code, written once for Lock and LockSet (`what` names the
// handle's type in errors: "sqlock::Lock").

/// The claim behind `handle`, or errc::invalid_argument when it was
/// released or moved from.
HeldClaim& checked(const std::shared_ptr<HeldClaim>& handle, const char* what);
/// Lock::release(), LockSet::release(): releases now (a re-entrant hold only
/// ends its nesting); after a failure but errc::lost the handle stays, for
/// another release(). A no-op once released, and in a forked child.
void release(std::shared_ptr<HeldClaim>& handle);
/// The destructor's and the move assignment's release: a failure goes to
/// the release error handler (set_release_error_handler). Empties `handle`.
/// Never throws.
void release_quietly(std::shared_ptr<HeldClaim>& handle) noexcept;
/// Runs `release` where nothing may throw: a failure goes to the process's
/// release error handler (release_errors.cpp).
void release_reporting_failure(const std::function<void()>& release) noexcept;
/// Lock::detach(), LockSet::detach(): stops managing the rows without
/// releasing them; returns the claim, `handle` empty.
std::shared_ptr<HeldClaim> detach(std::shared_ptr<HeldClaim>& handle, const char* what);

}  // namespace sqlock::detail
