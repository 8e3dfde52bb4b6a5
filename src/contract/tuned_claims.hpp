// How a backend answers the three claim calls of the contract (backend.hpp)
// with a statement tuned for each kind of claim: one exclusive name (the hot
// path), a semaphore slot, a shared hold, a set of exclusive names, a set
// that mixes modes. A backend's class `B` derives from TunedConnection<B>,
// writes SQLOCK_TUNED_CLAIM_CALLS (below) in its public part and defines
// the per-kind calls it declares; TunedConnection's acquire(), renew() and
// release() hand the claim to acquire_by_kind(), renew_by_kind() and
// release_by_kind(), which pick the call. The calls are members of the
// final class, called on it directly: the Connection's virtual call is the
// only dispatch. A backend without a tuned statement for a kind may answer
// it another way (renew_each() and release_each() do a set's rows one by
// one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract/backend.hpp"

namespace sqlock::detail {

/// Outcome of one attempt at one name.
struct AcquireResult {
    std::optional<Row> acquired;  // our new row, when we got the lock
    std::optional<Row> holder;    // the current holder's row, when we did not (if known)
    bool claimed = false;         // as ClaimResult's
    bool queued = false;          // as ClaimResult's
    bool left_line = false;       // as ClaimResult's
};

/// Outcome of one attempt at a set of names.
struct SetAcquireResult {
    /// Every entry's row, in any order, when the set was taken; empty when
    /// it was not (then nothing was written).
    std::vector<Row> acquired;
    /// When not taken: the live rows among the names and holder rows,
    /// markers included (those the backend could read; a name freed
    /// meanwhile has none).
    std::vector<Row> holders;
    /// Not taken because a waiter is queued for one of the names.
    bool queued = false;
};

/// Whom an attempt at one name lets go first: the live waiters queued for
/// `name` (a lock's name, or a semaphore's without "#N") in
/// `<table>_queue` whose ticket is below `before`. An inactive gate (no
/// queue table) lets nobody first: the attempt is as it always was.
struct QueueGate {
    std::string name;
    std::int64_t before = 0;

    bool active() const noexcept { return before > 0; }
    /// The caller holds ticket `before` (else it has no place: every live
    /// waiter goes first).
    bool has_place() const noexcept { return active() && before != INT64_MAX; }
    static QueueGate none() { return {}; }
    static QueueGate of(const Claim& claim) {
        return claim.before > 0 ? QueueGate{claim.only().name, claim.before} : none();
    }
};

enum class ReleaseOutcome {
    released,  // row deleted
    kept,      // row kept until created + min_hold (min_hold not yet over)
    lost,      // no row with this id and locked_by: not ours any more
};

/// The per-kind calls every TunedConnection defines, declared once (a class
/// must declare the members it defines; the list lives here so that no
/// backend's copy can drift from what the *_by_kind() functions call):
///   try_acquire, try_acquire_slot, try_acquire_shared: one name's attempt
///     (a slot's number goes to `*slot_out`); `gate` says who goes first;
///   try_acquire_set, try_acquire_mixed_set: a set's attempt, all or nothing;
///   renew_one, renew_shared, renew_set, renew_mixed_set: the rows still
///     ours, their expiry moved to now + lease;
///   release_one, release_shared: one row's release, kept while its minimum
///     hold lasts; release_set (rows not ours), release_mixed_set (no
///     minimum hold): how many rows were not ours any more.
#define SQLOCK_TUNED_CLAIM_CALLS                                                                   \
    AcquireResult try_acquire(const std::string& lockstring, duration lease,                       \
                              const std::string& locked_by, const QueueGate& gate);                \
    AcquireResult try_acquire_slot(const std::string& name, int capacity, duration lease,          \
                                   const std::string& locked_by, int* slot_out,                    \
                                   const QueueGate& gate);                                         \
    AcquireResult try_acquire_shared(const std::string& name, const std::string& own,              \
                                     duration lease, const std::string& locked_by,                 \
                                     const QueueGate& gate);                                       \
    SetAcquireResult try_acquire_set(const std::vector<std::string>& lockstrings, duration lease,  \
                                     const std::string& locked_by, bool yield_to_queue);           \
    SetAcquireResult try_acquire_mixed_set(const std::vector<ClaimEntry>& entries, duration lease, \
                                           const std::string& locked_by, bool yield_to_queue);     \
    std::optional<Row> renew_one(std::int64_t id, const std::string& locked_by, duration lease);   \
    std::optional<Row> renew_shared(std::int64_t id, const std::string& name,                      \
                                    const std::string& locked_by, duration lease);                 \
    std::vector<Row> renew_set(const std::vector<std::int64_t>& ids, const std::string& locked_by, \
                               duration lease);                                                    \
    std::vector<Row> renew_mixed_set(const std::vector<ClaimEntry>& entries,                       \
                                     const std::vector<std::int64_t>& ids,                         \
                                     const std::string& locked_by, duration lease);                \
    ReleaseOutcome release_one(std::int64_t id, const std::string& lockstring,                     \
                               const std::string& locked_by, duration min_hold);                   \
    ReleaseOutcome release_shared(std::int64_t id, const std::string& own,                         \
                                  const std::string& name, const std::string& locked_by,           \
                                  duration min_hold);                                              \
    std::size_t release_set(const std::vector<std::int64_t>& ids,                                  \
                            const std::vector<std::string>& lockstrings,                           \
                            const std::string& locked_by, duration min_hold);                      \
    std::size_t release_mixed_set(const std::vector<ClaimEntry>& entries,                          \
                                  const std::vector<std::int64_t>& ids,                            \
                                  const std::string& locked_by)

/// claim_own_holder() for one name's attempt.
inline bool claim_own_holder(AcquireResult& r, const std::string& locked_by) {
    if (r.acquired || !r.holder || r.holder->locked_by != locked_by) return false;
    r.acquired = std::move(r.holder);
    r.holder.reset();
    r.claimed = true;
    return true;
}

inline ClaimResult to_claim_result(AcquireResult&& r, int slot = 0) {
    ClaimResult out;
    if (r.acquired) out.acquired.push_back(std::move(*r.acquired));
    if (r.holder) out.holders.push_back(std::move(*r.holder));
    out.slot = out.acquired.empty() ? 0 : slot;
    out.claimed = r.claimed;
    out.queued = r.queued;
    out.left_line = r.left_line;
    return out;
}

inline ClaimResult to_claim_result(SetAcquireResult&& r) {
    ClaimResult out;
    out.acquired = std::move(r.acquired);
    out.holders = std::move(r.holders);
    out.queued = r.queued;
    return out;
}

template <class B>
ClaimResult acquire_by_kind(B& c, const Claim& claim, duration lease,
                            const std::string& locked_by) {
    if (claim.set) {
        const bool yield = claim.before > 0;
        if (claim.any_shared())
            return to_claim_result(c.try_acquire_mixed_set(claim.entries, lease, locked_by, yield));
        return to_claim_result(c.try_acquire_set(claim.names(), lease, locked_by, yield));
    }
    const ClaimEntry& e = claim.only();
    const QueueGate gate = QueueGate::of(claim);
    switch (e.mode) {
        case ClaimMode::shared:
            return to_claim_result(
                c.try_acquire_shared(e.name, e.shared_row, lease, locked_by, gate));
        case ClaimMode::slot: {
            int slot = 0;
            AcquireResult r = c.try_acquire_slot(e.name, e.capacity, lease, locked_by, &slot, gate);
            return to_claim_result(std::move(r), slot);
        }
        case ClaimMode::exclusive:
            break;
    }
    return to_claim_result(c.try_acquire(e.name, lease, locked_by, gate));
}

template <class B>
std::vector<Row> renew_by_kind(B& c, const Claim& held, const std::vector<std::int64_t>& ids,
                               const std::string& locked_by, duration lease) {
    if (held.set) {
        if (held.any_shared()) return c.renew_mixed_set(held.entries, ids, locked_by, lease);
        return c.renew_set(ids, locked_by, lease);
    }
    const ClaimEntry& e = held.only();
    std::optional<Row> row = e.shared() ? c.renew_shared(ids.front(), e.name, locked_by, lease)
                                        : c.renew_one(ids.front(), locked_by, lease);
    std::vector<Row> out;
    if (row) out.push_back(std::move(*row));
    return out;
}

template <class B>
ClaimRelease release_by_kind(B& c, const Claim& held, const std::vector<std::int64_t>& ids,
                             const std::string& locked_by, duration min_hold) {
    ClaimRelease out;
    if (!held.set) {
        const ClaimEntry& e = held.only();
        const ReleaseOutcome r =
            e.shared() ? c.release_shared(ids.front(), e.shared_row, e.name, locked_by, min_hold)
                       : c.release_one(ids.front(), e.name, locked_by, min_hold);
        out.lost = r == ReleaseOutcome::lost ? 1 : 0;
        out.kept = r == ReleaseOutcome::kept;
        return out;
    }
    if (!held.any_shared()) {
        out.lost = c.release_set(ids, held.names(), locked_by, min_hold);
        return out;
    }
    if (min_hold <= duration::zero()) {
        out.lost = c.release_mixed_set(held.entries, ids, locked_by);
        return out;
    }
    // With a minimum hold: the exclusive names in one statement, each
    // shared name's row on its own (as release_set() keeps rows one by one).
    std::vector<std::int64_t> exclusive_ids;
    std::vector<std::string> exclusive_names;
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (!held.entries[i].shared()) {
            exclusive_ids.push_back(ids[i]);
            exclusive_names.push_back(held.entries[i].name);
        }
    if (!exclusive_ids.empty())
        out.lost = c.release_set(exclusive_ids, exclusive_names, locked_by, min_hold);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const ClaimEntry& e = held.entries[i];
        if (!e.shared()) continue;
        const ReleaseOutcome r =
            c.release_shared(ids[i], e.shared_row, e.name, locked_by, min_hold);
        if (r == ReleaseOutcome::lost) ++out.lost;
        if (r == ReleaseOutcome::kept) out.kept = true;
    }
    return out;
}

/// A Connection whose claim calls go to its per-kind calls: a backend's
/// class `B` derives from TunedConnection<B> and declares those with
/// SQLOCK_TUNED_CLAIM_CALLS.
template <class B>
class TunedConnection : public Connection {
  public:
    ClaimResult acquire(const Claim& claim, duration lease, const std::string& locked_by) final {
        return acquire_by_kind(self(), claim, lease, locked_by);
    }
    std::vector<Row> renew(const Claim& held, const std::vector<std::int64_t>& ids,
                           const std::string& locked_by, duration lease) final {
        return renew_by_kind(self(), held, ids, locked_by, lease);
    }
    ClaimRelease release(const Claim& held, const std::vector<std::int64_t>& ids,
                         const std::string& locked_by, duration min_hold) final {
        return release_by_kind(self(), held, ids, locked_by, min_hold);
    }

  private:
    B& self() { return static_cast<B&>(*this); }
};

/// A set's rows renewed one by one, for a backend without one statement
/// for it (inside its own transaction, if it wants them renewed together).
template <class B>
std::vector<Row> renew_each(B& c, const std::vector<std::int64_t>& ids,
                            const std::string& locked_by, duration lease) {
    std::vector<Row> renewed;
    for (std::int64_t id : ids)
        if (auto row = c.renew_one(id, locked_by, lease)) renewed.push_back(std::move(*row));
    return renewed;
}

/// A set's rows released one by one, as renew_each(); returns how many
/// were not ours any more.
template <class B>
std::size_t release_each(B& c, const std::vector<std::int64_t>& ids,
                         const std::vector<std::string>& lockstrings, const std::string& locked_by,
                         duration min_hold) {
    std::size_t lost = 0;
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (c.release_one(ids[i], lockstrings[i], locked_by, min_hold) == ReleaseOutcome::lost)
            ++lost;
    return lost;
}

}  // namespace sqlock::detail
