#include "lock/lock_acquirer.hpp"

#include <chrono>
#include <thread>

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "monitoring/observer.hpp"
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
        LockState& st = *taken_->state_;
        if (a_.still_vouched(st, o_)) return true;
        // Lapsed while it left the line: not ours after all. Its owner goes
        // on to the next attempt.
        st.released = true;
        st.detach();
        owner_.locked_by = st.locked_by;
        owner_.token = st.token;
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

std::shared_ptr<LockState> Acquirer::check_reentry(const Target& t, const LockOptions& o) {
    const std::string& lockstring = t.name;
    std::lock_guard<std::mutex> guard(s_->holds_mutex);
    // Held shared by this thread: an exclusive request would wait for
    // itself. (Another shared hold is a row of its own, and may be had.)
    if (!t.shared) {
        const std::string prefix = shared_prefix(t.name);
        for (auto at = s_->holds.lower_bound(prefix);
             at != s_->holds.end() && at->first.compare(0, prefix.size(), prefix) == 0; ++at) {
            auto held = at->second.lock();
            if (!held || held->depth == 0 || held->lost || !held->shared) continue;
            if (held->thread != std::this_thread::get_id()) continue;
            throw error(errc::busy, "lock '" + printable(t.name) +
                                        "' is held shared by this thread through this "
                                        "Locker (id " +
                                        std::to_string(held->id) +
                                        "); an exclusive request would wait on itself [" +
                                        s_->url.redacted + "]");
        }
    }
    auto it = s_->holds.find(lockstring);
    if (it == s_->holds.end()) return nullptr;
    auto held = it->second.lock();
    if (!held || held->depth == 0 || held->lost) return nullptr;
    if (held->thread != std::this_thread::get_id()) return nullptr;  // others may wait
    if (!o.reentrant)
        throw error(errc::busy, "lock '" + printable(lockstring) +
                                    "' is already held by this "
                                    "thread through this Locker (id " +
                                    std::to_string(held->id) +
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
    int slot = 0;
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
        queue_exists = c.has_queue();
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
    slot = r.slot;
    refusal->queue_exists = queue_exists;
    refusal->left_line = r.left_line;
    // A connection that broke after our insert committed, then a retry:
    // the "holder" may be ourselves. Then the lock is ours after all, and
    // a semaphore's slot comes from the row, not from the attempt that
    // did not know it had taken one.
    if (claim_own_holder(r, owner.locked_by)) {
        if (t.capacity > 0) slot = slot_number(r.acquired.front().lockstring, t.name, t.capacity);
    } else if (!r.taken()) {
        refusal->holders = std::move(r.holders);
        refusal->queued = r.queued;
        return std::nullopt;
    }
    // A row this attempt's statement wrote lasts the whole lease from
    // `sent`; a claimed one only what the database said it had left.
    Row& row = r.acquired.front();
    const duration certain = r.claimed ? certain_lease(row, o.expires) : o.expires;
    auto st = std::make_shared<LockState>();
    st->locker = s_;
    st->name = t.name;
    st->lockstring = std::move(row.lockstring);
    st->slot = slot;
    st->shared = t.shared;
    st->id = row.id;
    st->locked_by = std::move(owner.locked_by);
    st->token = std::move(owner.token);
    st->lease = o.expires;
    st->min_hold = o.min_hold;
    st->pid = current_pid();
    st->thread = std::this_thread::get_id();
    st->on_lost = o.on_lost;
    st->on_expiring = o.on_expiring;
    st->on_renewed_late = o.on_renewed_late;
    st->validity.granted(sent, certain);
    st->acquired_at = sent;
    st->created = std::move(row.created);
    st->expires = std::move(row.expires);
    // An acquisition that took long (a busy wait, a server that was
    // stopped while it was under way) counts from its sending, and a
    // claimed row only for the time it had left: valid_until may be
    // close or past already. Renew once at once, so the holder starts
    // with a lease it can vouch for.
    if (st->validity.until() - clock::now() < o.expires / 2 && !refresh(*st)) {
        refusal->holders.clear();  // it expired meanwhile: not ours after all
        refusal->lapsed = true;
        owner.locked_by = std::move(st->locked_by);
        owner.token = std::move(st->token);
        return std::nullopt;
    }
    {
        std::lock_guard<std::mutex> guard(s_->holds_mutex);
        s_->holds[st->lockstring] = st;
    }
    give_heartbeat(*st, o);
    return Lock(std::move(st));
}

void Acquirer::give_heartbeat(LockState& st, const LockOptions& o) {
    LockState* raw = &st;
    st.heartbeat = heartbeat_for(
        o, s_->options.db_timeout, st.validity, st.name, st.id,
        [raw](Heartbeat::clock::time_point deadline) {
            // The heartbeat's own clock read is before this one; an
            // observer's latency is the statement's alone.
            const auto sent = raw->locker->options.observer ? Heartbeat::clock::now()
                                                            : Heartbeat::clock::time_point{};
            std::optional<Row> row;
            try {
                row = raw->locker->pool->with([&](Connection& c) {
                    // Bounded by the deadline, then back to the defaults for
                    // whoever uses this pooled connection next.
                    struct Reset {
                        Connection& c;
                        ~Reset() { c.set_deadline(Heartbeat::clock::time_point::max()); }
                    } reset{c};
                    c.set_deadline(deadline);
                    return renew_row(c, *raw, raw->lease);
                });
            } catch (...) {
                ++raw->failed_renewals;  // the next success is late (observer.hpp)
                throw;
            }
            if (!row) return false;
            {
                std::lock_guard<std::mutex> guard(raw->mutex);
                raw->expires = row->expires;
            }
            tell_renewed(*raw, sent);
            return true;
        },
        [raw] { raw->mark_lost(); });
}

bool Acquirer::still_vouched(LockState& st, const LockOptions& o) {
    if (st.validity.until() - clock::now() >= o.expires / 2) return true;
    return refresh(st);
}

bool Acquirer::refresh(LockState& st) {
    const auto resent = clock::now();
    std::optional<Row> row;
    try {
        row = s_->pool->with([&](Connection& c) { return renew_row(c, st, st.lease); });
    } catch (const error&) {
        if (clock::now() >= st.validity.until()) throw;
        return true;
    }
    if (!row) return false;
    st.validity.granted(resent, st.lease);
    st.expires = row->expires;
    return true;
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

}  // namespace sqlock::detail
