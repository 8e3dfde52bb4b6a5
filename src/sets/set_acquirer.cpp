// Locker::lock_all and try_lock_all: several names taken at once, all or
// nothing, each exclusively or shared.
//
// Each attempt is one transaction of the backend (try_acquire_set, or
// try_acquire_mixed_set when a name is held shared) that writes every row
// or none, so a set never holds part of its names, and
// holds nothing while it waits: sets that overlap, in any order, cannot
// deadlock. A waiting set wakes on the release of any of its names (pushed
// where the backend pushes, else polled on its schedule) and on the expiry
// of the first holder in its way.
//
// A set takes no place in the names' lines (wait_queue.hpp): places in
// several lines, each drawn at its own moment, could order two sets
// differently in two lines, each first in one and waiting for the other.
// It lets the callers waiting in line for any of its names go first, as a
// caller that does not wait does.
#include "sets/set_acquirer.hpp"

#include <algorithm>

#include "base/owner.hpp"
#include "base/validate.hpp"
#include "held/held_claim.hpp"
#include "lock/lock_acquirer.hpp"
#include "monitoring/observer.hpp"
#include "state/access.hpp"
#include "waiting/contention_text.hpp"
#include "waiting/wait_loop.hpp"

namespace sqlock::detail {
namespace {

class SetAcquirer {
  public:
    using clock = std::chrono::steady_clock;

    explicit SetAcquirer(std::shared_ptr<LockerState> state) : s_(std::move(state)) {}

    /// The members as a set: each name valid, each once, in bytewise order.
    static std::vector<SetMember> canonical(std::vector<SetMember> members) {
        if (members.empty())
            throw error(errc::invalid_argument, "a lock set needs at least one name, got none");
        std::sort(members.begin(), members.end(),
                  [](const SetMember& a, const SetMember& b) { return a.name < b.name; });
        std::vector<SetMember> out;
        for (SetMember& m : members) {
            if (!out.empty() && out.back().name == m.name) {
                if (out.back().mode != m.mode)
                    throw error(errc::invalid_argument,
                                "lock '" + printable(m.name) +
                                    "' is asked for twice in the set, shared and exclusively");
                continue;
            }
            out.push_back(std::move(m));
        }
        if (out.size() > max_set_names)
            throw error(errc::invalid_argument, "a lock set takes at most " +
                                                    std::to_string(max_set_names) + " names, got " +
                                                    std::to_string(out.size()));
        for (const SetMember& m : out) {
            validate_lock_name(m.name);
            if (m.mode == lock_mode::shared) validate_shared_name(m.name);
        }
        return out;
    }

    /// Names all taken in `mode`, as a set.
    static std::vector<SetMember> canonical(const std::vector<std::string>& names, lock_mode mode) {
        std::vector<SetMember> members;
        for (const std::string& name : names) members.push_back({name, mode});
        return canonical(std::move(members));
    }

    /// A set is never re-entrant: a name this thread holds here would be
    /// waited for by itself.
    void check_not_held_here(const std::vector<SetMember>& members) {
        std::lock_guard<std::mutex> guard(s_->holds_mutex);
        for (const SetMember& member : members) {
            const std::string& name = member.name;
            if (member.mode == lock_mode::exclusive)
                if (auto held = shared_hold_here(*s_, name))
                    throw error(errc::busy, "lock '" + printable(name) +
                                                "' of the set is held shared by this thread "
                                                "through this Locker (id " +
                                                std::to_string(held->ids.front()) +
                                                "); waiting would wait on itself [" +
                                                s_->url.redacted + "]");
            auto it = s_->holds.find(name);
            if (it == s_->holds.end()) continue;
            auto held = it->second.lock();
            if (!held || held->depth == 0 || held->lost) continue;
            if (held->thread != std::this_thread::get_id()) continue;
            throw error(errc::busy, "lock '" + printable(name) +
                                        "' of the set is already held by this thread through "
                                        "this Locker (id " +
                                        std::to_string(held->ids.front()) +
                                        "); waiting would wait on itself [" + s_->url.redacted +
                                        "]");
        }
    }

    std::optional<LockSet> attempt_once(const std::vector<SetMember>& members, const LockOptions& o,
                                        Owner& owner, Refusal* refusal) {
        ensure_initialized(*s_);
        Claim claim;
        claim.set = true;
        for (const SetMember& m : members)
            claim.entries.push_back(
                m.mode == lock_mode::shared
                    ? ClaimEntry::shared_as(m.name, shared_lockstring(m.name, owner.token))
                    : ClaimEntry::exclusive(m.name));
        const auto sent = clock::now();
        ClaimResult r = s_->pool->with([&](Connection& c) {
            // No place in line: every waiter goes first, if there is a line.
            claim.before = c.has(SideTable::queue) ? INT64_MAX : 0;
            return c.acquire(claim, o.expires, owner.locked_by);
        });
        // Each entry's row, in the order of the entries (the backends answer
        // in any order).
        auto rows_of = [&](std::vector<Row>& rows, bool live_and_ours) {
            std::vector<Row> out;
            for (const ClaimEntry& e : claim.entries)
                for (Row& row : rows)
                    if (row.lockstring == e.row() &&
                        (!live_and_ours ||
                         (row.locked_by == owner.locked_by && row.seconds_left > 0)))
                        out.push_back(row);
            return out;
        };
        bool claimed = false;
        if (!r.acquired.empty()) {
            r.acquired = rows_of(r.acquired, false);
            // Cannot be: the backend's one transaction wrote every row.
            if (r.acquired.size() != claim.entries.size())
                throw error(errc::backend, "the database answered a lock set with " +
                                               std::to_string(r.acquired.size()) + " of its " +
                                               std::to_string(claim.entries.size()) + " rows [" +
                                               s_->url.redacted + "]");
        } else {
            // A retry after a broken link whose first try took the set: every
            // row of the set is live and ours. Ours after all, for what it
            // has left.
            std::vector<Row> mine = rows_of(r.holders, true);
            claimed = !r.queued && mine.size() == claim.entries.size();
            if (!claimed) {
                for (Row& row : r.holders)
                    if (in_the_way(row, claim.entries, owner.locked_by))
                        refusal->holders.push_back(std::move(row));
                refusal->queued = r.queued;
                return std::nullopt;
            }
            r.acquired = std::move(mine);
        }
        duration certain = o.expires;
        if (claimed)
            for (const Row& row : r.acquired)
                certain = std::min(certain, certain_lease(row, o.expires));
        std::vector<std::string> names = claim.names();
        auto held = HeldClaim::taken(s_, std::move(claim), std::move(r.acquired), std::move(names),
                                     owner, o, sent, certain);
        if (!hand_out(held, o, owner, *refusal)) return std::nullopt;
        return Access::set(std::move(held));
    }

    /// Attempts until taken, as `o` says (wait_for()).
    LockSet acquire(const std::vector<SetMember>& members, const LockOptions& o) {
        Waiting waiting(*this, members, o);
        LockObserver* observer = s_->options.observer.get();
        if (!observer) {
            wait_for(*s_, waiting, o);
            return waiting.take();
        }
        const auto start = clock::now();
        try {
            wait_for(*s_, waiting, o);
        } catch (const error& e) {
            tell_not_taken(observer, waiting.names(), observed_outcome(e),
                           std::chrono::duration_cast<duration>(clock::now() - start),
                           waiting.attempts());
            throw;
        }
        LockSet set = waiting.take();
        tell_taken(observer, set, std::chrono::duration_cast<duration>(clock::now() - start),
                   waiting.attempts());
        return set;
    }

    /// One attempt by a caller that does not wait (try_lock_all,
    /// try_lock_members): nullopt when a name is taken.
    std::optional<LockSet> try_once(const std::vector<SetMember>& members, const LockOptions& o) {
        Refusal refusal;
        Owner owner = make_owner(o.metadata, o.min_hold, o.expires);
        LockObserver* observer = s_->options.observer.get();
        if (!observer) return attempt_once(members, o, owner, &refusal);
        std::optional<LockSet> set;
        try {
            set = attempt_once(members, o, owner, &refusal);
        } catch (const error& e) {
            tell_not_taken(observer, names_of(members), observed_outcome(e), duration::zero(), 1);
            throw;
        }
        if (set)
            tell_taken(observer, *set, duration::zero(), 1);
        else
            tell_not_taken(observer, names_of(members), acquire_outcome::busy, duration::zero(), 1);
        return set;
    }

  private:
    static std::vector<std::string> names_of(const std::vector<SetMember>& members) {
        std::vector<std::string> names;
        for (const SetMember& m : members) names.push_back(m.name);
        return names;
    }

    // An acquisition of a set, told as one (observer.hpp).
    static void tell_taken(LockObserver* observer, const LockSet& set, duration waited,
                           int attempts) {
        const SetEventNames names{set.names(), set.ids()};
        tell(observer, [&](LockObserver& o) {
            o.on_acquire(AcquireEvent{set.names().front(), set.ids().front(),
                                      acquire_outcome::acquired, waited, attempts, &names});
        });
    }
    static void tell_not_taken(LockObserver* observer, const std::vector<std::string>& names,
                               acquire_outcome outcome, duration waited, int attempts) {
        const std::vector<std::int64_t> none;
        const SetEventNames set{names, none};
        tell(observer, [&](LockObserver& o) {
            o.on_acquire(AcquireEvent{names.front(), 0, outcome, waited, attempts, &set});
        });
    }

    // Why a set was not taken: every name in the way, with its holder.
    static std::string refused_text(const std::vector<std::string>& names, const Refusal& refusal) {
        const std::string set = names.size() == 1
                                    ? "lock set ('" + printable(names[0]) + "')"
                                    : "lock set of " + std::to_string(names.size()) + " names";
        if (refusal.queued && refusal.holders.empty())
            return set + " is not free: callers waiting in line for its names go first";
        std::string text = set + " is not free: ";
        if (refusal.holders.empty()) return text + "a name was just taken by another holder";
        for (std::size_t i = 0; i < refusal.holders.size(); ++i) {
            const LockInfo info = to_info(refusal.holders[i]);
            text += (i ? "; lock '" : "lock '") + printable(info.name) + "' is held by " +
                    holder_text(info);
        }
        if (refusal.queued) text += "; callers waiting in line for its names go first";
        return text;
    }

    // The wait of a set: the wait loop's claimant, without a place in line.
    class Waiting final : public Claimant {
      public:
        Waiting(SetAcquirer& acquirer, const std::vector<SetMember>& members, const LockOptions& o)
            : a_(acquirer),
              members_(members),
              o_(o),
              owner_(make_owner(o.metadata, o.min_hold, o.expires)) {
            for (const SetMember& m : members) names_.push_back(m.name);
        }

        const std::vector<std::string>& names() const override { return names_; }
        bool takes_place() const override { return false; }
        const std::string& locked_by() const override { return owner_.locked_by; }
        std::string subject() const override {
            return names_.size() == 1
                       ? "lock set ('" + printable(names_[0]) + "')"
                       : "the lock set of " + std::to_string(names_.size()) + " names";
        }
        bool attempt(std::int64_t /*before: always every waiter*/, Refusal& refusal) override {
            ++attempts_;
            taken_ = a_.attempt_once(members_, o_, owner_, &refusal);
            return taken_.has_value();
        }
        std::string refused_text(const Refusal& refusal) const override {
            return SetAcquirer::refused_text(names_, refusal);
        }
        LockSet take() { return std::move(*taken_); }
        int attempts() const { return attempts_; }

      private:
        int attempts_ = 0;
        SetAcquirer& a_;
        const std::vector<SetMember>& members_;
        const LockOptions& o_;
        std::vector<std::string> names_;
        Owner owner_;
        std::optional<LockSet> taken_;
    };

    std::shared_ptr<LockerState> s_;
};

// The mode of a set's names comes from its members, not the options.
void refuse_mode_for_members(const LockOptions& options) {
    if (options.mode == lock_mode::shared)
        throw error(errc::invalid_argument,
                    "a lock set of members takes each name's mode from its member: leave "
                    "LockOptions::mode exclusive");
}

// One attempt at a canonical set.
std::optional<LockSet> try_set(const std::shared_ptr<LockerState>& state,
                               const std::vector<SetMember>& set, const LockOptions& options) {
    validate_options(options);
    SetAcquirer a(state);
    a.check_not_held_here(set);
    return a.try_once(set, options);
}

// A canonical set, waited for as `options` say.
LockSet wait_for_set(const std::shared_ptr<LockerState>& state, const std::vector<SetMember>& set,
                     const LockOptions& options) {
    validate_options(options);
    SetAcquirer a(state);
    a.check_not_held_here(set);
    return a.acquire(set, options);
}

}  // namespace

std::optional<LockSet> try_lock_all(const std::shared_ptr<LockerState>& s,
                                    const std::vector<std::string>& names,
                                    const LockOptions& options) {
    return try_set(s, SetAcquirer::canonical(names, options.mode), options);
}

LockSet lock_all(const std::shared_ptr<LockerState>& s, const std::vector<std::string>& names,
                 const LockOptions& options) {
    return wait_for_set(s, SetAcquirer::canonical(names, options.mode), options);
}

std::optional<LockSet> try_lock_members(const std::shared_ptr<LockerState>& s,
                                        const std::vector<SetMember>& members,
                                        const LockOptions& options) {
    refuse_mode_for_members(options);
    return try_set(s, SetAcquirer::canonical(members), options);
}

LockSet lock_members(const std::shared_ptr<LockerState>& s, const std::vector<SetMember>& members,
                     const LockOptions& options) {
    refuse_mode_for_members(options);
    return wait_for_set(s, SetAcquirer::canonical(members), options);
}

}  // namespace sqlock::detail
