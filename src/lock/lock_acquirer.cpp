#include "lock/lock_acquirer.hpp"

#include <chrono>
#include <thread>

#include "base/validate.hpp"
#include "monitoring/observer.hpp"
#include "state/access.hpp"
#include "waiting/contention_text.hpp"

namespace sqlock::detail {

namespace {

using clock = std::chrono::steady_clock;

// What is contended: "lock 'x'", "the only slot of semaphore 'x'", "all N
// slots of semaphore 'x'".
std::string subject_text(const std::string& name, int capacity) {
    if (capacity == 0) return "lock '" + printable(name) + "'";
    if (capacity < 0) return "a shared hold of lock '" + printable(name) + "'";
    if (capacity == 1) return "the only slot of semaphore '" + printable(name) + "'";
    return "all " + std::to_string(capacity) + " slots of semaphore '" + printable(name) + "'";
}

std::string contention_text(const std::string& name, int capacity) {
    if (capacity == 0) return subject_text(name, capacity) + " is held by ";
    if (capacity == 1) return subject_text(name, capacity) + " is taken by ";
    return subject_text(name, capacity) + " are taken; first to free: ";
}

// A row kept only by a minimum hold: its job finished. Saying "held by" a
// process that is gone would send the reader looking for it.
std::string min_hold_text(const LockInfo& info) {
    return "kept by the minimum hold of " + describe_holder(info) + ", whose job finished, until " +
           info.expires + " UTC (" + describe_expiry(info.seconds_left) + ")";
}

std::string busy_text(const Target& t, const std::optional<LockInfo>& info) {
    if (!info || !kept_by_min_hold(*info))
        return contention_text(t.name, t.capacity) + holder_text(info);
    const std::string kept = min_hold_text(*info);
    if (t.capacity <= 1) return subject_text(t.name, t.capacity) + " is " + kept;
    return contention_text(t.name, t.capacity) + "'" + printable(info->name) + "', " + kept;
}

// Free, but callers waiting for it go first: one that does not wait never
// takes a name from under the line.
std::string queued_text(const Target& t) {
    return subject_text(t.name, t.capacity) + (t.capacity > 1 ? " are" : " is") +
           " promised to the callers waiting for it, who go first";
}

std::string timeout_text(const Target& t, const std::optional<LockInfo>& info) {
    if (t.capacity != 0 || (info && kept_by_min_hold(*info))) return busy_text(t, info);
    return "lock '" + printable(t.name) + "' still held by " + holder_text(info);
}

}  // namespace

// The wait of one name: the wait loop's claimant.
class Acquirer::Waiting final : public Claimant {
  public:
    Waiting(Acquirer& acquirer, const Target& t, const LockOptions& o)
        : a_(acquirer),
          t_(t),
          o_(o),
          names_{t.name},
          owner_(make_owner(o.metadata, o.min_hold, o.expires)) {}

    const std::vector<std::string>& names() const override { return names_; }
    bool takes_place() const override { return true; }
    const std::string& locked_by() const override { return owner_.locked_by; }
    std::string subject() const override {
        if (t_.capacity > 0) return "semaphore '" + printable(t_.name) + "'";
        return subject_text(t_.name, t_.shared ? -1 : 0);
    }

    bool attempt(std::int64_t before, Refusal& refusal) override {
        ++attempts_;
        taken_ = a_.attempt_once(t_, o_, owner_, &refusal, before, in_doubt_);
        in_doubt_ = false;
        return taken_.has_value();
    }

    // A plain lock's or a shared hold's next attempt finds its own row
    // anyway (claim_own_holder()); a slot's must look for it.
    void attempt_in_doubt() override { in_doubt_ = true; }

    bool vouched_after_leaving() override {
        HeldClaim& held = *Access::held(*taken_);
        bool ours = false;
        try {
            ours = vouch_or_give_back(held, owner_);
        } catch (...) {
            taken_.reset();
            throw;
        }
        if (ours) return true;
        // Lapsed while it left the line: not ours after all. Its owner goes
        // on to the next attempt.
        taken_.reset();
        return false;
    }

    std::string refused_text(const Refusal& r) const override {
        const std::optional<LockInfo> info = r.first_holder();
        if (r.lapsed && !info)
            return subject_text(t_.name, t_.capacity) + " was taken, but its lease of " +
                   format_duration(o_.expires) +
                   " ran out before the database confirmed it: the acquisition took longer "
                   "than the lease";
        return r.queued && !info ? queued_text(t_) : busy_text(t_, info);
    }

    std::string timeout_text(const Refusal& r) const override {
        return detail::timeout_text(t_, r.first_holder());
    }

    Lock take() { return std::move(*taken_); }
    int attempts() const { return attempts_; }

  private:
    int attempts_ = 0;
    Acquirer& a_;
    const Target& t_;
    const LockOptions& o_;
    const std::vector<std::string> names_;
    Owner owner_;
    std::optional<Lock> taken_;
    bool in_doubt_ = false;  // the last attempt's answer was lost
};

std::shared_ptr<HeldClaim> Acquirer::check_reentry(const Target& t, const LockOptions& o) {
    const std::string& lockstring = t.name;
    std::lock_guard<std::mutex> guard(s_->holds_mutex);
    // Held shared by this thread: an exclusive request would wait for
    // itself. (Another shared hold is a row of its own, and may be had.)
    if (!t.shared)
        if (auto held = shared_hold_here(*s_, t.name))
            throw error(errc::busy, "lock '" + printable(t.name) +
                                        "' is held shared by this thread through this "
                                        "Locker (id " +
                                        std::to_string(held->ids.front()) +
                                        "); an exclusive request would wait on itself [" +
                                        s_->url.redacted + "]");
    auto it = s_->holds.find(lockstring);
    if (it == s_->holds.end()) return nullptr;
    auto held = it->second.lock();
    if (!held || held->depth == 0 || held->lost) return nullptr;
    if (held->thread != std::this_thread::get_id()) return nullptr;  // others may wait
    if (!o.reentrant)
        throw error(errc::busy, "lock '" + printable(lockstring) +
                                    "' is already held by this "
                                    "thread through this Locker (id " +
                                    std::to_string(held->ids.front()) +
                                    "); waiting would wait on itself (set reentrant to nest) [" +
                                    s_->url.redacted + "]");
    ++held->depth;
    return held;
}

std::optional<std::pair<int, Row>> Acquirer::own_slot(Connection& c, const Target& t,
                                                      const Owner& owner) {
    for (Row& row : c.list(t.name + "#", false)) {
        if (row.locked_by != owner.locked_by || row.seconds_left <= 0) continue;
        if (const int n = slot_number(row.lockstring, t.name, t.capacity))
            return std::make_pair(n, std::move(row));
    }
    return std::nullopt;
}

std::optional<Lock> Acquirer::attempt_once(const Target& t, const LockOptions& o, Owner& owner,
                                           Refusal* refusal, std::int64_t before, bool in_doubt) {
    ensure_initialized();
    // Before the statement is sent: the row's expiry is later than this
    // plus the lease (see Lock::valid_until).
    const auto sent = clock::now();
    bool tried = in_doubt;
    bool queue_exists = false;
    Claim claim;
    claim.entries.push_back(
        t.shared         ? ClaimEntry::shared_as(t.name, shared_lockstring(t.name, owner.token))
        : t.capacity > 0 ? ClaimEntry::slot_of(t.name, t.capacity)
                         : ClaimEntry::exclusive(t.name));
    ClaimResult r = s_->pool->with([&](Connection& c) {
        queue_exists = c.has(SideTable::queue);
        claim.before = queue_exists ? before : 0;
        if (t.capacity == 0) return c.acquire(claim, o.expires, owner.locked_by);
        // A retry on a fresh connection (the first broke), or an attempt
        // after one whose answer was lost (attempt_in_doubt()): the first
        // may have taken a slot before its reply was lost. That slot is ours;
        // taking another would leave it held until its lease ends. (A
        // plain lock needs no such look: its retry finds the row taken,
        // and the holder it reads is ourselves; see below.)
        if (tried) {
            if (auto mine = own_slot(c, t, owner)) {
                ClaimResult found;
                found.acquired.push_back(std::move(mine->second));
                found.slot = mine->first;
                found.claimed = true;
                return found;
            }
        }
        tried = true;
        return c.acquire(claim, o.expires, owner.locked_by);
    });
    refusal->queue_exists = queue_exists;
    refusal->left_line = r.left_line;
    // A connection that broke after our insert committed, then a retry:
    // the "holder" may be ourselves. Then the lock is ours after all (a
    // semaphore's slot is the row's: Lock::slot() reads it there).
    if (!claim_own_holder(r, owner.locked_by) && !r.taken()) {
        refusal->holders = std::move(r.holders);
        refusal->queued = r.queued;
        return std::nullopt;
    }
    // A row this attempt's statement wrote lasts the whole lease from
    // `sent`; a claimed one only what the database said it had left.
    const duration certain = r.claimed ? certain_lease(r.acquired.front(), o.expires) : o.expires;
    // Held, a slot is its row, claimed exclusively (claim.hpp); the name
    // asked for is kept beside it.
    if (t.capacity > 0)
        claim.entries.front() = ClaimEntry::exclusive(r.acquired.front().lockstring);
    std::vector<std::string> asked;
    if (t.capacity > 0) asked.push_back(t.name);
    auto held = HeldClaim::taken(s_, std::move(claim), std::move(r.acquired), std::move(asked),
                                 owner, o, sent, certain);
    if (!hand_out(held, o, owner, *refusal)) return std::nullopt;
    return Access::lock(std::move(held));
}

Lock Acquirer::acquire(const Target& t, const LockOptions& o) {
    Waiting waiting(*this, t, o);
    LockObserver* observer = s_->options.observer.get();
    if (!observer) {
        wait_for(*s_, waiting, o);
        return waiting.take();
    }
    const auto start = clock::now();
    const auto tell_outcome = [&](acquire_outcome outcome, std::int64_t id) {
        tell(observer, [&](LockObserver& ob) {
            ob.on_acquire(AcquireEvent{t.name, id, outcome,
                                       std::chrono::duration_cast<duration>(clock::now() - start),
                                       waiting.attempts()});
        });
    };
    try {
        wait_for(*s_, waiting, o);
    } catch (const error& e) {
        tell_outcome(observed_outcome(e), 0);
        throw;
    }
    Lock lock = waiting.take();
    tell_outcome(acquire_outcome::acquired, lock.id());
    return lock;
}

acquire_outcome observed_outcome(const error& e) noexcept {
    if (e.category() == errc::busy) return acquire_outcome::busy;
    if (e.category() == errc::timeout) return acquire_outcome::timeout;
    return acquire_outcome::failed;
}

std::optional<Lock> Acquirer::try_once(const Target& t, const LockOptions& o) {
    Refusal refusal;
    Owner owner = make_owner(o.metadata, o.min_hold, o.expires);
    LockObserver* observer = s_->options.observer.get();
    if (!observer) return attempt_once(t, o, owner, &refusal);
    std::optional<Lock> lock;
    try {
        lock = attempt_once(t, o, owner, &refusal);
    } catch (const error& e) {
        tell(observer, [&](LockObserver& ob) {
            ob.on_acquire(AcquireEvent{t.name, 0, observed_outcome(e), duration::zero(), 1});
        });
        throw;
    }
    tell(observer, [&](LockObserver& ob) {
        ob.on_acquire(AcquireEvent{t.name, lock ? lock->id() : 0,
                                   lock ? acquire_outcome::acquired : acquire_outcome::busy,
                                   duration::zero(), 1});
    });
    return lock;
}

namespace {

// A plain lock's target, its name checked for its mode.
Target lock_target(const std::string& name, const LockOptions& options) {
    validate_lock_name(name);
    validate_options(options);
    const bool shared = options.mode == lock_mode::shared;
    if (shared) validate_shared_name(name);
    return {name, 0, shared};
}

// A semaphore's target. Semaphores have no shared mode: every slot is one
// holder's.
Target slot_target(const std::string& name, int capacity, const LockOptions& options) {
    validate_lock_name(name);
    if (capacity < 1 || capacity > max_capacity)
        throw error(errc::invalid_argument, "semaphore capacity must be between 1 and " +
                                                std::to_string(max_capacity) + ", got " +
                                                std::to_string(capacity));
    std::string longest = slot_lockstring(name, capacity);
    if (longest.size() > max_name_bytes)
        throw error(errc::invalid_argument, "semaphore name too long: slot rows are named '" +
                                                printable(longest) + "', which exceeds 128 bytes");
    validate_options(options);
    if (options.mode == lock_mode::shared)
        throw error(errc::invalid_argument,
                    "a semaphore slot cannot be taken in shared mode: only a plain lock can");
    return {name, capacity, false};
}

}  // namespace

std::optional<Lock> try_lock_name(const std::shared_ptr<LockerState>& s, const std::string& name,
                                  const LockOptions& options) {
    const Target target = lock_target(name, options);
    Acquirer a(s);
    if (auto nested = a.check_reentry(target, options)) return Access::lock(std::move(nested));
    return a.try_once(target, options);
}

Lock lock_name(const std::shared_ptr<LockerState>& s, const std::string& name,
               const LockOptions& options) {
    const Target target = lock_target(name, options);
    Acquirer a(s);
    if (auto nested = a.check_reentry(target, options)) return Access::lock(std::move(nested));
    return a.acquire(target, options);
}

std::optional<Lock> try_acquire_slot(const std::shared_ptr<LockerState>& s, const std::string& name,
                                     int capacity, const LockOptions& options) {
    return Acquirer(s).try_once(slot_target(name, capacity, options), options);
}

Lock acquire_slot(const std::shared_ptr<LockerState>& s, const std::string& name, int capacity,
                  const LockOptions& options) {
    return Acquirer(s).acquire(slot_target(name, capacity, options), options);
}

}  // namespace sqlock::detail
