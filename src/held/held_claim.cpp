#include "held/held_claim.hpp"

#include <mutex>

#include "base/current_pid.hpp"
#include "base/validate.hpp"
#include "contract/row_names.hpp"
#include "monitoring/observer.hpp"
#include "waiting/wait_loop.hpp"

namespace sqlock {
namespace detail {

namespace {

// A held claim with the names its entries do not say, in one allocation.
struct NamedHeldClaim final : HeldClaim {
    std::vector<std::string> names;
};

std::shared_ptr<HeldClaim> made_for(std::vector<std::string> names) {
    if (names.empty()) return std::make_shared<HeldClaim>();
    auto named = std::make_shared<NamedHeldClaim>();
    named->names = std::move(names);
    named->asked = &named->names;
    return named;
}

}  // namespace

std::shared_ptr<HeldClaim> HeldClaim::taken(std::shared_ptr<LockerState> locker, Claim held,
                                            std::vector<Row>&& rows, std::vector<std::string> names,
                                            Owner& owner, const LockOptions& o,
                                            clock::time_point sent, duration certain) {
    std::shared_ptr<HeldClaim> h = made_for(std::move(names));
    h->locker = std::move(locker);
    h->claim = std::move(held);
    h->claim.before = 0;
    h->ids.reserve(rows.size());
    Row* earliest = nullptr;
    for (Row& row : rows) {
        h->ids.push_back(row.id);
        if (!earliest || row.expires < earliest->expires) earliest = &row;
    }
    h->validity.answered(std::move(earliest->expires));
    h->created = std::move(rows.front().created);
    h->locked_by = std::move(owner.locked_by);
    h->token = std::move(owner.token);
    h->lease = o.expires;
    h->min_hold = o.min_hold;
    h->on_lost = o.on_lost;
    h->pid = current_pid();
    h->thread = std::this_thread::get_id();
    h->validity.granted(sent, certain);
    h->acquired_at = sent;
    return h;
}

template <typename Call>
void HeldClaim::tell(Call&& call) const noexcept {
    LockObserver* observer = locker->options.observer.get();
    if (!observer) return;
    if (!claim.set) {
        detail::tell(observer, [&](LockObserver& o) { call(o, nullptr); });
        return;
    }
    const SetEventNames set{names(), ids};
    detail::tell(observer, [&](LockObserver& o) { call(o, &set); });
}

bool HeldClaim::renew_once(duration new_lease, clock::time_point deadline, std::size_t* missing) {
    std::vector<Row> rows = locker->pool->with([&](Connection& c) {
        if (deadline == clock::time_point::max()) return c.renew(claim, ids, locked_by, new_lease);
        // Bounded by the deadline, then back to the defaults for whoever
        // uses this pooled connection next.
        struct Reset {
            Connection& c;
            ~Reset() { c.set_deadline(clock::time_point::max()); }
        } reset{c};
        c.set_deadline(deadline);
        return c.renew(claim, ids, locked_by, new_lease);
    });
    for (std::size_t i = 0; i < ids.size(); ++i) {
        bool renewed = false;
        for (const Row& r : rows) renewed = renewed || r.id == ids[i];
        if (!renewed) {
            *missing = i;
            return false;
        }
    }
    const Row* earliest = nullptr;
    for (const Row& r : rows)
        if (!earliest || r.expires < earliest->expires) earliest = &r;
    validity.answered(earliest->expires);
    return true;
}

bool HeldClaim::vouch() {
    if (validity.until() - clock::now() >= lease / 2) return true;
    const auto resent = clock::now();
    std::size_t missing = 0;
    try {
        if (!renew_once(lease, clock::time_point::max(), &missing)) return false;
    } catch (const error&) {
        if (clock::now() >= validity.until()) throw;
        return true;
    }
    validity.granted(resent, lease);
    return true;
}

bool HeldClaim::renew_rows(duration new_lease, clock::time_point deadline,
                           clock::time_point grant_from) {
    LockObserver* observer = locker->options.observer.get();
    // The heartbeat's own clock read is before this one; an observer's
    // latency is the statement's alone.
    const auto sent = observer ? clock::now() : clock::time_point{};
    std::size_t missing = 0;
    bool renewed = false;
    try {
        renewed = renew_once(new_lease, deadline, &missing);
    } catch (...) {
        ++failed_renewals;  // the next success is late (observer.hpp)
        throw;
    }
    if (!renewed) {
        mark_lost(missing);
        return false;
    }
    if (grant_from != clock::time_point{}) validity.granted(grant_from, new_lease);
    if (observer) {
        const int failed = failed_renewals.exchange(0);
        tell([&](LockObserver& o, const SetEventNames* set) {
            o.on_renew(RenewEvent{name(), ids.front(),
                                  std::chrono::duration_cast<duration>(clock::now() - sent),
                                  failed > 0, failed, set});
        });
    }
    return true;
}

void HeldClaim::renew(duration new_lease) {
    validate_lease(new_lease, "lease");
    const auto sent = clock::now();
    if (renew_rows(new_lease, clock::time_point::max(), sent)) return;
    if (claim.set)
        throw error(errc::lost, "the " + describe() +
                                    " is no longer ours: the lease of one of its rows ran out or "
                                    "it was taken over [" +
                                    locker->url.redacted + "]");
    throw error(errc::lost, describe() +
                                " is no longer ours: its lease ran out or it was taken over [" +
                                locker->url.redacted + "]");
}

bool HeldClaim::is_held() {
    if (lost) return false;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const bool ours =
            locker->pool->with([&](Connection& c) { return c.is_held(ids[i], locked_by); });
        if (!ours) {
            mark_lost(i);
            return false;
        }
    }
    return true;
}

std::optional<error> HeldClaim::renewal_failure() const {
    if (!heartbeat) return std::nullopt;
    return heartbeat->last_failure();
}

void HeldClaim::mark_lost(std::size_t i) noexcept {
    if (lost.exchange(true)) return;
    if (on_lost) {
        try {
            on_lost(name(i), ids[i]);
        } catch (...) {
        }
    }
    if (!handed_out) return;
    tell([&](LockObserver& o, const SetEventNames* set) {
        o.on_loss(LossEvent{name(i), ids[i], set});
    });
}

void HeldClaim::stop_managing() noexcept {
    if (heartbeat) heartbeat->stop();
    if (claim.set) return;  // a set is no hold of its Locker's (re-entrancy is a Lock's)
    std::lock_guard<std::mutex> guard(locker->holds_mutex);
    auto it = locker->holds.find(row());
    if (it != locker->holds.end()) {
        auto current = it->second.lock();
        if (!current || current.get() == this) locker->holds.erase(it);
    }
}

void HeldClaim::release_rows() {
    stop_managing();
    // If the link breaks mid-release, the pool retries once; a DELETE that
    // committed just before the break then finds no row. That reads as
    // "lost" by default: "released" for a lock that was in fact taken over
    // would tell the caller its critical section was protected, and even a
    // retry answered before valid_until does not rule a take-over out where
    // a crash failover to an asynchronous standby can lose the row itself.
    // Only where the server keeps every acknowledged commit across a
    // failover (Galera) does a retry that finds every row gone while the
    // lease still certainly runs mean our own delete (or a force-release,
    // which the heartbeat would have seen had it come earlier): no take-over
    // can come before the lease ends. A COMMIT whose node left the cluster
    // mid-way (1180) ends that way whenever the cluster certified it.
    // Asked of the retry's connection only: the first try pays nothing.
    bool first_try = true, retried_where_commits_kept = false;
    ClaimRelease outcome = locker->pool->with([&](Connection& c) {
        if (!first_try) retried_where_commits_kept = c.failover_keeps_commits();
        first_try = false;
        return c.release(claim, ids, locked_by, min_hold);
    });
    if (retried_where_commits_kept && outcome.lost == ids.size() && clock::now() < validity.until())
        outcome.lost = 0;
    // One name is free when its row went (a shared release may have freed
    // the name: its last holder left); a set's names each may be, since the
    // release does not say which rows were not ours.
    if (claim.set || (outcome.lost == 0 && !outcome.kept))
        for (const ClaimEntry& e : claim.entries) locker->hub->released(e.name);
    if (outcome.lost > 0) {
        // Which rows the release does not tell: the first name's stands.
        if (!lost.exchange(true))
            tell([&](LockObserver& o, const SetEventNames* set) {
                o.on_loss(LossEvent{name(), ids.front(), set});
            });
        if (claim.set)
            throw error(errc::lost, std::to_string(outcome.lost) + " of the " + describe() +
                                        " were no longer ours at release: they expired and were "
                                        "taken over or deleted (the others were released) [" +
                                        locker->url.redacted + "]");
        throw error(errc::lost, describe() +
                                    " was no longer ours at release: it expired and was taken "
                                    "over or deleted [" +
                                    locker->url.redacted + "]");
    }
    tell([&](LockObserver& o, const SetEventNames* set) {
        o.on_release(ReleaseEvent{name(), ids.front(),
                                  std::chrono::duration_cast<duration>(clock::now() - acquired_at),
                                  set});
    });
}

std::string HeldClaim::describe() const {
    if (!claim.set) return "lock '" + printable(row()) + "' (id " + std::to_string(ids[0]) + ")";
    const std::size_t n = claim.entries.size();
    std::string text = "set of " + std::to_string(n) + " lock" + (n == 1 ? "" : "s") + " (";
    for (std::size_t i = 0; i < n && i < 5; ++i)
        text += (i ? ", '" : "'") + printable(name(i)) + "' id " + std::to_string(ids[i]);
    if (n > 5) text += ", ...";
    return text + ")";
}

HeldClaim::~HeldClaim() {
    if (!heartbeat) return;
    // In a forked child the heartbeat's threads do not exist: forget them.
    if (current_pid() != pid)
        heartbeat->abandon();
    else
        heartbeat->stop();
}

bool hand_out(const std::shared_ptr<HeldClaim>& held, const LockOptions& o, Owner& owner,
              Refusal& refusal) {
    HeldClaim& h = *held;
    if (!vouch_or_give_back(h, owner)) {
        refusal.holders.clear();  // it expired meanwhile: not ours after all
        refusal.lapsed = true;
        return false;
    }
    if (!h.claim.set) {
        std::lock_guard<std::mutex> guard(h.locker->holds_mutex);
        h.locker->holds[h.row()] = held;
    }
    h.handed_out = true;  // before the heartbeat: told of from then on
    HeldClaim* raw = &h;
    h.heartbeat = heartbeat_for(
        o, h.locker->options.db_timeout, h.validity, h.name(), h.ids.front(),
        [raw](Heartbeat::clock::time_point deadline) {
            return raw->renew_rows(raw->lease, deadline);
        },
        [raw] { raw->mark_lost(0); });
    return true;
}

void give_back(HeldClaim& held, Owner& owner) noexcept {
    held.stop_managing();
    held.released = true;
    owner.locked_by = std::move(held.locked_by);
    owner.token = std::move(held.token);
}

std::shared_ptr<HeldClaim> shared_hold_here(LockerState& s, const std::string& name) {
    const std::string prefix = shared_prefix(name);
    for (auto at = s.holds.lower_bound(prefix);
         at != s.holds.end() && at->first.compare(0, prefix.size(), prefix) == 0; ++at) {
        auto held = at->second.lock();
        if (!held || held->depth == 0 || held->lost || !held->claim.only().shared()) continue;
        if (held->thread == std::this_thread::get_id()) return held;
    }
    return nullptr;
}

bool vouch_or_give_back(HeldClaim& held, Owner& owner) {
    bool ours = false;
    try {
        ours = held.vouch();
    } catch (...) {
        give_back(held, owner);
        throw;
    }
    if (!ours) give_back(held, owner);
    return ours;
}

HeldClaim& checked(const std::shared_ptr<HeldClaim>& handle, const char* what) {
    if (!handle)
        throw error(errc::invalid_argument, std::string("use of a released or moved-from ") + what);
    return *handle;
}

void release(std::shared_ptr<HeldClaim>& handle) {
    if (!handle) return;  // second call: no-op
    std::shared_ptr<HeldClaim> h = std::move(handle);
    // In a forked child: the rows belong to the parent. Leave them alone.
    if (current_pid() != h->pid) return;
    {
        std::lock_guard<std::mutex> guard(h->locker->holds_mutex);
        if (h->depth > 1) {
            --h->depth;  // an outer re-entrant hold remains
            return;
        }
        h->depth = 0;
    }
    if (h->released.exchange(true)) return;
    try {
        h->release_rows();
    } catch (const error& e) {
        if (e.category() == errc::lost) throw;
        // A transient failure (database busy, connection down): the rows are
        // still ours, so keep the handle usable for another release(), and
        // for the destructor's. The heartbeat stays stopped.
        h->released = false;
        {
            std::lock_guard<std::mutex> guard(h->locker->holds_mutex);
            h->depth = 1;
        }
        handle = std::move(h);
        throw;
    }
}

void release_quietly(std::shared_ptr<HeldClaim>& handle) noexcept {
    if (!handle) return;
    release_reporting_failure([&] { release(handle); });
    handle.reset();
}

std::shared_ptr<HeldClaim> detach(std::shared_ptr<HeldClaim>& handle, const char* what) {
    checked(handle, what);
    std::shared_ptr<HeldClaim> h = std::move(handle);
    h->released = true;
    h->stop_managing();
    return h;
}

}  // namespace detail
}  // namespace sqlock
