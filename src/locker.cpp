#include "sqlock/locker.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include "backend_factory.hpp"
#include "batch_pacing.hpp"
#include "contention_text.hpp"
#include "current_pid.hpp"
#include "lock_state.hpp"
#include "owner.hpp"
#include "records.hpp"
#include "validate.hpp"
#include "wait_queue.hpp"

namespace sqlock {
namespace detail {

LockerState::~LockerState() {
    if (current_pid() != creator_pid) {
        // A forked child must not close the parent's connections: closing a
        // PostgreSQL socket would end the parent's session for it.
        if (hub) hub->abandon();
        (void)hub.release();
        (void)pool.release();
        (void)backend.release();
    }
}

void ensure_initialized(LockerState& s) {
    if (!s.needs_init.load()) return;
    std::lock_guard<std::mutex> guard(s.init_mutex);
    if (!s.needs_init.load()) return;
    s.pool->with([](Connection& c) {
        c.init_schema();
        c.forget_missing_queue();
        return 0;
    });
    s.needs_init = false;
}

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

// What one acquisition attempt is: a plain lock or a semaphore slot.
struct Target {
    std::string name;  // as asked for; also the ReleaseHub key waiters wait on
    int capacity = 0;  // 0: plain lock
    bool shared = false;
};

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

class Acquirer {
  public:
    Acquirer(std::shared_ptr<LockerState> state) : s_(std::move(state)) {}

    void ensure_initialized() { detail::ensure_initialized(*s_); }

    // Re-entrancy: the same thread asking again for a lock it holds through
    // this Locker would wait on itself. Returns a nested hold when allowed.
    std::shared_ptr<LockState> check_reentry(const Target& t, const LockOptions& o) {
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
            throw error(errc::busy,
                        "lock '" + printable(lockstring) +
                            "' is already held by this "
                            "thread through this Locker (id " +
                            std::to_string(held->id) +
                            "); waiting would wait on itself (set reentrant to nest) [" +
                            s_->url.redacted + "]");
        ++held->depth;
        return held;
    }

    // A live slot of `t` held by `owner`, with its number.
    static std::optional<std::pair<int, Row>> own_slot(Connection& c, const Target& t,
                                                       const Owner& owner) {
        for (Row& row : c.list(t.name + "#", false)) {
            if (row.locked_by != owner.locked_by || row.seconds_left <= 0) continue;
            if (const int n = slot_number(row.lockstring, t.name, t.capacity))
                return std::make_pair(n, std::move(row));
        }
        return std::nullopt;
    }

    // What a failed attempt found.
    struct Refusal {
        std::optional<Row> holder;  // the row in the way, when known
        bool queued = false;        // waiters ahead went first
        bool queue_exists = false;  // the table has a queue of waiters
        bool left_line = false;     // on success: the attempt also left our place in line
        bool lapsed = false;        // taken, but its lease ran out before it was confirmed
    };

    // One attempt as `owner`, letting the live waiters queued before ticket
    // `before` go first (INT64_MAX: all of them, as a caller that does not
    // wait does); a waiting caller keeps one owner for all its attempts.
    // On success the lock takes `owner`'s strings; otherwise it is left as
    // it was, for the next attempt.
    std::optional<Lock> attempt_once(const Target& t, const LockOptions& o, Owner& owner,
                                     Refusal* refusal, std::int64_t before = INT64_MAX) {
        ensure_initialized();
        int slot = 0;
        // Before the statement is sent: the row's expiry is later than this
        // plus the lease (see Lock::valid_until).
        const auto sent = clock::now();
        bool tried = false;
        bool queue_exists = false;
        AcquireResult r = s_->pool->with([&](Connection& c) {
            queue_exists = c.has_queue();
            const QueueGate gate = queue_exists ? QueueGate{t.name, before} : QueueGate::none();
            if (t.shared)
                return c.try_acquire_shared(t.name, shared_lockstring(t.name, owner.token),
                                            o.expires, owner.locked_by, gate);
            if (t.capacity == 0) return c.try_acquire(t.name, o.expires, owner.locked_by, gate);
            // A retry on a fresh connection (the first broke): the first may
            // have taken a slot before its reply was lost. That slot is ours;
            // taking another would leave it held until its lease ends. (A
            // plain lock needs no such look: its retry finds the row taken,
            // and the holder it reads is ourselves; see below.)
            if (tried) {
                if (auto mine = own_slot(c, t, owner)) {
                    slot = mine->first;
                    return AcquireResult{std::move(mine->second), std::nullopt, true};
                }
            }
            tried = true;
            return c.try_acquire_slot(t.name, t.capacity, o.expires, owner.locked_by, &slot, gate);
        });
        refusal->queue_exists = queue_exists;
        refusal->left_line = r.left_line;
        // A connection that broke after our insert committed, then a retry:
        // the "holder" may be ourselves. Then the lock is ours after all, and
        // a semaphore's slot comes from the row, not from the attempt that
        // did not know it had taken one.
        if (claim_own_holder(r, owner.locked_by)) {
            if (t.capacity > 0) slot = slot_number(r.acquired->lockstring, t.name, t.capacity);
        } else if (!r.acquired) {
            refusal->holder = std::move(r.holder);
            refusal->queued = r.queued;
            return std::nullopt;
        }
        // A row this attempt's statement wrote lasts the whole lease from
        // `sent`; a claimed one only what the database said it had left.
        const duration certain = r.claimed ? certain_lease(*r.acquired, o.expires) : o.expires;
        auto st = std::make_shared<LockState>();
        st->locker = s_;
        st->name = t.name;
        st->lockstring = std::move(r.acquired->lockstring);
        st->slot = slot;
        st->shared = t.shared;
        st->id = r.acquired->id;
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
        st->created = std::move(r.acquired->created);
        st->expires = std::move(r.acquired->expires);
        // An acquisition that took long (a busy wait, a server that was
        // stopped while it was under way) counts from its sending, and a
        // claimed row only for the time it had left: valid_until may be
        // close or past already. Renew once at once, so the holder starts
        // with a lease it can vouch for.
        if (st->validity.until() - clock::now() < o.expires / 2 && !refresh(*st)) {
            refusal->holder = std::nullopt;  // it expired meanwhile: not ours after all
            refusal->lapsed = true;
            owner.locked_by = std::move(st->locked_by);
            owner.token = std::move(st->token);
            return std::nullopt;
        }
        {
            std::lock_guard<std::mutex> guard(s_->holds_mutex);
            s_->holds[st->lockstring] = st;
        }
        if (o.heartbeat) {
            LockState* raw = st.get();
            const duration warn = o.warn_before > duration::zero() ? o.warn_before : o.expires / 4;
            std::function<void(Heartbeat::clock::time_point)> expiring;
            if (o.on_expiring)
                expiring = [raw](Heartbeat::clock::time_point until) {
                    try {
                        raw->on_expiring(raw->name, raw->id, until);
                    } catch (...) {
                        // A throwing handler must not end the heartbeat.
                    }
                };
            std::function<void(int, duration)> renewed_late;
            if (o.on_renewed_late)
                renewed_late = [raw](int failures, duration left) {
                    try {
                        raw->on_renewed_late(raw->name, raw->id, failures, left);
                    } catch (...) {
                        // A throwing handler must not end the heartbeat.
                    }
                };
            st->heartbeat = std::make_unique<Heartbeat>(
                Heartbeat::settings_for(o.expires, s_->options.db_timeout, warn), st->validity,
                [raw](Heartbeat::clock::time_point deadline) {
                    auto row = raw->locker->pool->with([&](Connection& c) {
                        // Bounded by the deadline, then back to the defaults
                        // for whoever uses this pooled connection next.
                        struct Reset {
                            Connection& c;
                            ~Reset() { c.set_deadline(Heartbeat::clock::time_point::max()); }
                        } reset{c};
                        c.set_deadline(deadline);
                        return renew_row(c, *raw, raw->lease);
                    });
                    if (!row) return false;
                    std::lock_guard<std::mutex> guard(raw->mutex);
                    raw->expires = row->expires;
                    return true;
                },
                [raw] { raw->mark_lost(); }, std::move(expiring), std::move(renewed_late));
        }
        return Lock(std::move(st));
    }

    // Leaving the line is a round trip after the acquisition, which a link
    // that freezes can stretch to db_timeout: the lock is handed out only
    // with a lease it can still vouch for, renewed once as attempt_once
    // does when less than half of it is left. False when the row lapsed
    // meanwhile; throws as refresh() does.
    bool still_vouched(LockState& st, const LockOptions& o) {
        if (st.validity.until() - clock::now() >= o.expires / 2) return true;
        return refresh(st);
    }

    // False when the row has expired (and may be someone else's). A
    // transient failure keeps the validity the lock has, and its heartbeat,
    // if any, decides from there; but a lock whose validity has already run
    // out is never handed out on a failure: the error goes to the caller.
    bool refresh(LockState& st) {
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

    Lock acquire(const Target& t, const LockOptions& o) {
        const bool waits = o.wait_forever || o.wait > duration::zero();
        const auto start = clock::now();
        const auto deadline = o.wait_forever ? clock::time_point::max() : start + o.wait;
        bool hub_started = false;  // after joining the line: the join keeps arrival order
        const duration queue_lease = queue_lease_for(o.queue_lease, o.expires);
        Owner owner = make_owner(o.metadata, o.min_hold, o.expires);
        // Without pushes the first two in line poll the name, on the
        // backend's schedule.
        using micros = std::chrono::microseconds;
        const PollSchedule schedule = s_->backend->poll_schedule();
        micros backoff = schedule.first;
        std::optional<std::mt19937> jitter;  // seeded only if we poll
        std::optional<WatchGuard> watch;     // while first in line: releases of t.name are pushed
        bool said = false;                   // ... from the attempt after this turned true
        std::optional<QueuePlace> place;     // our place in line (wait_queue.hpp), once we wait
        clock::time_point next_look{};       // ... behind others: when it looks again
        // ... and, without pushes, when its pace says to: set after each
        // look, not at every wake-up (the progress hook wakes a waiter more
        // often than a slow line's pace, and would put the look off each
        // time). min(): to be worked out.
        clock::time_point paced_look = clock::time_point::min();
        // ... and, with pushes, once shortly after it joined: the one ahead
        // may have been leaving the line as it joined, in a statement whose
        // snapshot predates the join, which then woke nobody. A look after
        // that statement has surely ended finds the place first.
        constexpr auto join_recheck = std::chrono::milliseconds(200);
        clock::time_point recheck = clock::time_point::max();
        Refusal refusal;
        std::uint64_t mark = s_->hub->mark();
        // Who tries the name itself: the first in line, and without pushes
        // the second too. The first leaving the line (it got the name) is
        // told to the second only by a push; without one, the second would
        // learn it a look later, and the name would idle meanwhile. Its
        // attempts find out instead: they succeed once the first is gone
        // and the name is free.
        auto tries = [&] { return !place || place->ahead() <= (s_->hub->pushes() ? 0 : 1); };
        // Who listens for pushes: the first three in line, so that the one
        // woken to the front already listens, and the one behind it too,
        // in case it looked last when it was third.
        constexpr std::int64_t listen_within = 2;
        // How far away a waiter's next look must be for it to give up its
        // pooled connections meanwhile.
        constexpr auto idle_connection_after = std::chrono::seconds(30);
        for (;;) {
            const std::uint64_t slept_from = mark;
            mark = s_->hub->mark();
            // Behind those, only the place is looked at (and renewed): when
            // due, or when woken (the one ahead left), not at every progress
            // report.
            if (place) {
                const auto now = clock::now();
                const bool behind = !tries();
                const bool due =
                    now >= place->renew_due() ||
                    (behind && (now >= next_look || s_->hub->woken(t.name, slept_from)));
                if (due) {
                    paced_look = clock::time_point::min();
                    recheck = clock::time_point::max();
                    if (!place->poll()) place.reset();  // lapsed: join again
                }
            }
            if (tries()) {
                refusal = Refusal{};
                const std::int64_t before = place ? place->ticket() : INT64_MAX;
                if (auto lock = attempt_once(t, o, owner, &refusal, before)) {
                    // At once: the one behind may take the next free slot,
                    // or starts to watch the name.
                    // Only a separate leave() is a round trip after the
                    // acquisition that attempt_once vouched for.
                    const bool left_apart = place && !refusal.left_line;
                    if (place && refusal.left_line)
                        place->forget();
                    else if (place)
                        place->leave();
                    if (!left_apart || still_vouched(*lock->state_, o)) return std::move(*lock);
                    // Lapsed while it left the line: not ours after all.
                    // Its owner goes on to the next attempt, at the back.
                    LockState& lapsed = *lock->state_;
                    lapsed.released = true;
                    lapsed.detach();
                    owner.locked_by = lapsed.locked_by;
                    owner.token = lapsed.token;
                    place.reset();
                    refusal = Refusal{};
                    refusal.lapsed = true;
                    refusal.queue_exists = true;
                }
                // Taken and the line left by the statement, but the row had
                // expired before it could be vouched for (attempt_once): the
                // place is gone, and the one behind was told it is first.
                if (place && refusal.left_line) {
                    place->forget();
                    place.reset();
                }
                // Second in line, and nobody ahead any more: first now. Its
                // polling starts afresh, so that the hand-off after a short
                // hold is not a whole capped interval late.
                if (place && place->ahead() > 0 && !refusal.queued) {
                    place->moved_to_front();
                    backoff = schedule.first;
                }
            }
            auto now = clock::now();
            const auto waited = std::chrono::duration_cast<duration>(now - start);
            std::optional<LockInfo> info;
            if (refusal.holder) info = to_info(*refusal.holder);
            const std::string db = " [" + s_->url.redacted + "]";
            if (!waits && refusal.lapsed && !info)
                contention_error(errc::busy,
                                 subject_text(t.name, t.capacity) +
                                     " was taken, but its lease of " + format_duration(o.expires) +
                                     " ran out before the database confirmed it: the "
                                     "acquisition took longer than the lease" +
                                     db,
                                 info);
            if (!waits)
                contention_error(
                    errc::busy,
                    (refusal.queued && !info ? queued_text(t) : busy_text(t, info)) + db, info);
            if (now >= deadline)
                contention_error(
                    errc::timeout,
                    timeout_text(t, info) + ", after waiting " + waited_text(waited) + db, info);
            if (o.on_waiting && !o.on_waiting(info ? &*info : nullptr, waited))
                contention_error(
                    errc::timeout,
                    timeout_text(t, info) + "; stopped waiting after " + waited_text(waited) + db,
                    info);
            if (!place && refusal.queue_exists) {
                try {
                    place.emplace(*s_, t.name, owner.locked_by, s_->hub->inbox(), queue_lease);
                    recheck = clock::now() + join_recheck;
                } catch (const error&) {
                    // Wait without a place this time; join on the next look.
                }
            }
            if (!hub_started && (!place || place->ahead() <= listen_within)) {
                // The listener connects now (once per Locker), after the
                // place was taken: arrival order is the order of the joins.
                // A wake-up sent to our inbox before it listened is caught
                // by looking again at once. Only near the front: PostgreSQL
                // (before 19) signals every listening session of the
                // database on every NOTIFY, and each reads the notification
                // queue in a transaction of its own, so a line of hundreds
                // of listeners would cost the server hundreds of
                // transactions per hand-off. Farther back, the place is
                // polled at its pace, as without pushes.
                s_->hub->start();
                hub_started = true;
                if (!tries()) {
                    next_look = clock::now();
                    continue;
                }
                // First in line: the watch below tries again before it sleeps.
                now = clock::now();
            }
            auto until = std::min(deadline, place ? place->renew_due() : deadline);
            if (!tries()) {
                // Behind others: the name is not ours to watch. Woken when
                // the one ahead leaves (pushed to our inbox), else polled
                // at the pace of our place.
                watch.reset();
                said = false;
                next_look = std::min(place->renew_due(), place->ahead_lapses());
                if (s_->hub->pushes()) next_look = std::min(next_look, recheck);
                if (!s_->hub->pushes()) {
                    if (paced_look == clock::time_point::min()) {
                        const duration pace =
                            poll_pace(place->ahead(), place->pace_seen(), queue_lease / 3);
                        std::uniform_int_distribution<std::int64_t> spread(pace.count() * 3 / 4,
                                                                           pace.count());
                        if (!jitter) jitter.emplace(std::random_device{}());
                        paced_look = now + duration(spread(*jitter));
                    }
                    next_look = std::min(next_look, paced_look);
                }
                until = std::min(until, next_look);
                // A look far ahead (a long place lease, far from the front)
                // goes without a server connection until then. A new
                // PostgreSQL session costs about a hundred times a look
                // (measured on the test machines: 13 ms a connection with
                // pgbench -C, about 0.1 ms a statement), and 256 waiters
                // reconnecting for every look kept two cores busy; so a
                // waiter that looks every few seconds keeps its
                // connection, and one that looks every half minute or less
                // often gives it up.
                if (next_look - now >= idle_connection_after &&
                    place->front_in() >= idle_connection_after)
                    s_->pool->close_idle();
                if (o.on_waiting) until = std::min(until, now + o.progress_every);
                s_->hub->wait_after(t.name, mark, until);
                continue;
            }
            // Sleep until a release wakes us, the holder's lease runs out, or
            // the deadline. Without push notifications: capped exponential
            // backoff with jitter, so many waiters do not poll in lockstep.
            if (refusal.holder && refusal.holder->seconds_left > 0) {
                // Capped before converting: a row expiring centuries ahead
                // (a foreign program's "forever") would overflow the clock.
                double ms = std::min(refusal.holder->seconds_left * 1000.0 + 1.0, 86400000.0);
                until = std::min(until, now + duration(static_cast<std::int64_t>(ms)));
            }
            if (s_->hub->pushes() && !said && (!place || place->ahead() == 0)) {
                // A release is pushed only while a listener says someone
                // waits for it: have ours say so, then try again before
                // sleeping, so a release in between is not missed.
                if (!watch) watch.emplace(*s_->hub, t.name);
                auto limit = std::min(until, now + std::chrono::seconds(2));
                if (o.on_waiting) limit = std::min(limit, now + o.progress_every);
                said = s_->hub->watched(t.name, limit);
                if (said) continue;
                now = clock::now();
            }
            if (said && s_->hub->pushes()) {
                // Safety net against a missed notification: re-check now and then.
                until = std::min(until, now + std::chrono::seconds(5));
            } else {
                // First in line polls quickly: it alone does, so the line
                // costs the same whatever its length.
                const micros cap(place ? 25'000 : 100'000);
                std::uniform_int_distribution<std::int64_t> spread(backoff.count() / 2,
                                                                   backoff.count());
                if (!jitter) jitter.emplace(std::random_device{}());
                until = std::min(until, now + micros(spread(*jitter)));
                backoff = std::min(
                    micros(static_cast<std::int64_t>(backoff.count() * schedule.growth)), cap);
            }
            // The progress hook runs after every attempt, and at least this often.
            if (o.on_waiting) until = std::min(until, now + o.progress_every);
            s_->hub->wait_after(t.name, mark, until);
        }
    }

  private:
    std::shared_ptr<LockerState> s_;
};

}  // namespace detail

using detail::Acquirer;

Locker::Locker(const std::string& url, LockerOptions options) {
    auto s = std::make_shared<detail::LockerState>();
    s->creator_pid = detail::current_pid();
    s->url = detail::parse_database_url(url);
    s->table = options.table;
    s->options = options;
    if (options.pool_size == 0 || options.pool_size > 1000)
        throw error(errc::invalid_argument, "pool_size must be between 1 and 1000");
    detail::validate_non_negative(options.pool_timeout, "pool_timeout");
    detail::validate_lease(options.db_timeout, "db_timeout");
    s->backend = detail::make_backend(s->url, s->table, options.db_timeout);
    detail::Backend* backend = s->backend.get();
    s->pool = std::make_unique<detail::ConnectionPool>([backend] { return backend->connect(); },
                                                       options.pool_size, options.pool_timeout);
    s->hub = std::make_unique<detail::ReleaseHub>([backend] { return backend->listen(); });
    using mode = LockerOptions::auto_init_mode;
    s->needs_init = options.auto_init == mode::always ||
                    (options.auto_init == mode::when_default && s->url.is_embedded_default);
    state_ = std::move(s);
}

Locker::Locker(Locker&&) noexcept = default;
Locker& Locker::operator=(Locker&&) noexcept = default;
Locker::~Locker() = default;

std::string Locker::default_url() {
    const char* env = std::getenv("SQLOCK_DB");
    if (env && *env) return env;
    return "sqlite://" + detail::embedded_default_path();
}

void Locker::init() {
    state_->backend->create_database();
    state_->pool->with([](detail::Connection& c) {
        c.init_schema();
        c.forget_missing_queue();
        c.check_access();
        return 0;
    });
    state_->needs_init = false;
}

namespace {

// A plain lock's target, its name checked for its mode.
detail::Target lock_target(const std::string& name, const LockOptions& options) {
    detail::validate_lock_name(name);
    detail::validate_options(options);
    const bool shared = options.mode == lock_mode::shared;
    if (shared) detail::validate_shared_name(name);
    return {name, 0, shared};
}

// Semaphores have no shared mode: every slot is one holder's.
void refuse_shared_mode(const LockOptions& options, const char* what) {
    if (options.mode == lock_mode::shared)
        throw error(errc::invalid_argument,
                    std::string(what) + " cannot be taken in shared mode: only a plain lock can");
}

}  // namespace

std::optional<Lock> Locker::try_lock(const std::string& name, const LockOptions& options) {
    const detail::Target target = lock_target(name, options);
    Acquirer a(state_);
    if (auto nested = a.check_reentry(target, options)) return Lock(std::move(nested));
    Acquirer::Refusal refusal;
    detail::Owner owner = detail::make_owner(options.metadata, options.min_hold, options.expires);
    return a.attempt_once(target, options, owner, &refusal);
}

Lock Locker::lock(const std::string& name, const LockOptions& options) {
    const detail::Target target = lock_target(name, options);
    Acquirer a(state_);
    if (auto nested = a.check_reentry(target, options)) return Lock(std::move(nested));
    return a.acquire(target, options);
}

static void validate_semaphore(const std::string& name, int capacity) {
    detail::validate_lock_name(name);
    if (capacity < 1 || capacity > 10000)
        throw error(errc::invalid_argument, "semaphore capacity must be between 1 and 10000, got " +
                                                std::to_string(capacity));
    std::string longest = detail::slot_lockstring(name, capacity);
    if (longest.size() > detail::max_name_bytes)
        throw error(errc::invalid_argument, "semaphore name too long: slot rows are named '" +
                                                detail::printable(longest) +
                                                "', which exceeds 128 bytes");
}

std::optional<Lock> Locker::try_acquire_slot(const std::string& name, int capacity,
                                             const LockOptions& options) {
    validate_semaphore(name, capacity);
    detail::validate_options(options);
    refuse_shared_mode(options, "a semaphore slot");
    Acquirer a(state_);
    Acquirer::Refusal refusal;
    detail::Owner owner = detail::make_owner(options.metadata, options.min_hold, options.expires);
    return a.attempt_once({name, capacity}, options, owner, &refusal);
}

Lock Locker::acquire_slot(const std::string& name, int capacity, const LockOptions& options) {
    validate_semaphore(name, capacity);
    detail::validate_options(options);
    refuse_shared_mode(options, "a semaphore slot");
    return Acquirer(state_).acquire({name, capacity}, options);
}

std::size_t Locker::purge_expired(std::size_t batch_size) {
    if (batch_size == 0) throw error(errc::invalid_argument, "purge batch size must be positive");
    Acquirer(state_).ensure_initialized();
    return detail::in_paced_batches(
        batch_size, [&](auto&& op) { return state_->pool->with(op); },
        [&](detail::Connection& c) { return c.purge_expired_batch(batch_size); });
}

namespace {

std::vector<LockInfo> read_rows(const std::shared_ptr<detail::LockerState>& state,
                                const std::string& prefix, bool expired_only) {
    Acquirer(state).ensure_initialized();
    auto found =
        state->pool->with([&](detail::Connection& c) { return c.list(prefix, expired_only); });
    std::vector<LockInfo> out;
    out.reserve(found.size());
    for (const auto& r : found) out.push_back(detail::to_info(r));
    return out;
}

}  // namespace

std::vector<LockInfo> Locker::list(const std::string& prefix) {
    return read_rows(state_, prefix, false);
}

std::vector<LockInfo> Locker::list_expired() {
    return read_rows(state_, "", true);
}

LockCounts Locker::lock_counts() {
    Acquirer(state_).ensure_initialized();
    return state_->pool->with([](detail::Connection& c) {
        const auto key = detail::Query::lock_counts;
        const detail::Rows r = c.query(key, {});
        const auto& row = detail::first_row(r, key, {});
        LockCounts counts;
        counts.held = detail::as_int64(row.at(0));
        counts.expired = detail::as_int64(row.at(1)) - counts.held;
        return counts;
    });
}

std::optional<LockInfo> Locker::show(const std::string& name) {
    detail::validate_lock_name(name);
    Acquirer(state_).ensure_initialized();
    auto row = state_->pool->with([&](detail::Connection& c) { return c.find(name); });
    if (!row) return std::nullopt;
    return detail::to_info(*row);
}

std::vector<LockInfo> Locker::shared_holders(const std::string& name) {
    detail::validate_lock_name(name);
    std::vector<LockInfo> live;
    for (LockInfo& info : read_rows(state_, detail::shared_prefix(name), false))
        if (!info.expired() && detail::shared_name_of(info.name) == name)
            live.push_back(std::move(info));
    return live;
}

std::size_t Locker::queue_length(const std::string& name) {
    detail::validate_lock_name(name);
    Acquirer(state_).ensure_initialized();
    return state_->pool->with([&](detail::Connection& c) -> std::size_t {
        if (!c.has_queue()) return 0;
        return static_cast<std::size_t>(
            detail::query_int64(c, detail::Query::queue_length, {detail::Value::text(name)}));
    });
}

namespace {

// The row of `name` if the owner token `token` holds it; nullopt if there is
// no row; errc::lost if somebody else holds it.
std::optional<LockInfo> row_held_by(const std::shared_ptr<detail::LockerState>& state,
                                    const std::string& name, const std::string& token) {
    detail::validate_lock_name(name);
    if (token.empty()) throw error(errc::invalid_argument, "owner token is empty");
    auto row = state->pool->with([&](detail::Connection& c) { return c.find(name); });
    if (!row) return std::nullopt;
    // Held shared: the token's own row, if it is one of the holders.
    if (row->locked_by == detail::shared_marker_owner) {
        auto own = state->pool->with(
            [&](detail::Connection& c) { return c.find(detail::shared_lockstring(name, token)); });
        if (own) row = std::move(own);
    }
    LockInfo info = detail::to_info(*row);
    if (info.holder.guid != token)
        throw error(errc::lost, "lock '" + detail::printable(name) + "' is held by " +
                                    describe_holder(info) + ", not by owner token " +
                                    detail::printable(token, 40) + " [" + state->url.redacted +
                                    "]");
    return info;
}

}  // namespace

std::optional<LockInfo> Locker::release(const std::string& name, const std::string& token) {
    auto held = row_held_by(state_, name, token);
    if (!held) return std::nullopt;
    const LockInfo& info = *held;
    // Delete exactly that row: if it changed hands meanwhile, nothing happens.
    const auto shared_name = detail::shared_name_of(info.name);
    bool deleted = state_->pool->with([&](detail::Connection& c) {
        if (shared_name)  // a shared holder's own row
            return c.release_shared(info.id, info.name, *shared_name, info.locked_by,
                                    duration::zero()) != detail::ReleaseOutcome::lost;
        return c.delete_exact(info.id, name, info.locked_by);
    });
    if (!deleted)
        throw error(errc::lost, "lock '" + detail::printable(name) +
                                    "' changed hands while being released [" +
                                    state_->url.redacted + "]");
    state_->hub->released(shared_name ? *shared_name : name);
    return info;
}

std::optional<LockInfo> Locker::renew(const std::string& name, const std::string& token,
                                      duration lease) {
    detail::validate_lock_name(name);
    detail::validate_lease(lease, "lease (expires)");
    auto held = row_held_by(state_, name, token);
    if (!held) return std::nullopt;
    const LockInfo& info = *held;
    // Renews exactly that row, and only while it has not expired.
    const auto shared_name = detail::shared_name_of(info.name);
    auto renewed = state_->pool->with([&](detail::Connection& c) {
        if (shared_name) return c.renew_shared(info.id, *shared_name, info.locked_by, lease);
        return c.renew(info.id, info.locked_by, lease);
    });
    if (!renewed)
        throw error(errc::lost, "lock '" + detail::printable(name) +
                                    "' ran out before it could be renewed (or changed hands) [" +
                                    state_->url.redacted + "]");
    return detail::to_info(*renewed);
}

std::optional<LockInfo> Locker::force_release(const std::string& name) {
    detail::validate_lock_name(name);
    for (int attempt = 0; attempt < 10; ++attempt) {
        auto row = state_->pool->with([&](detail::Connection& c) { return c.find(name); });
        if (!row) return std::nullopt;
        // Delete exactly the row we looked at, so we can say whose it was.
        // One shared holder's row: released as it releases itself, so that
        // the name's marker follows.
        const auto shared_name = detail::shared_name_of(name);
        bool deleted = state_->pool->with([&](detail::Connection& c) {
            if (shared_name)
                return c.release_shared(row->id, row->lockstring, *shared_name, row->locked_by,
                                        duration::zero()) != detail::ReleaseOutcome::lost;
            return c.delete_exact(row->id, row->lockstring, row->locked_by);
        });
        if (deleted) {
            // A shared marker: its holders' rows go too, so that each of
            // them finds its hold lost at its next renewal or look.
            if (row->locked_by == detail::shared_marker_owner)
                state_->pool->with([&](detail::Connection& c) {
                    for (const auto& holder : c.list(detail::shared_prefix(name), false))
                        c.delete_exact(holder.id, holder.lockstring, holder.locked_by);
                    return 0;
                });
            state_->hub->released(name);
            return detail::to_info(*row);
        }
    }
    throw error(errc::busy, "lock '" + detail::printable(name) +
                                "' keeps changing hands; force release gave up [" +
                                state_->url.redacted + "]");
}

Diagnosis Locker::diagnose() {
    Diagnosis d;
    d.facts.push_back({"database", state_->url.redacted});
    d.facts.push_back({"backend", state_->backend->name()});
    d.facts.push_back({"table", state_->table});
    state_->backend->diagnose(d);
    return d;
}

std::string Locker::url() const {
    return state_->url.redacted;
}
std::string Locker::backend_name() const {
    return state_->backend->name();
}
const std::string& Locker::table() const {
    return state_->table;
}

}  // namespace sqlock
