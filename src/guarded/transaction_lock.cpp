// Locks scoped to the caller's transaction (sqlock::lock_transaction): the
// name's row is inserted and deleted again inside that transaction, so its
// unique-index entry, which nobody else sees committed, keeps every other
// acquirer of the name waiting until the transaction ends, and nothing is
// left behind. Each backend makes one attempt (Backend::try_lock_transaction);
// the wait loop (wait_loop.hpp) paces the attempts up to the caller's
// deadline, as every acquisition's.
#include <algorithm>
#include <chrono>

#include "sqlock/error.hpp"
#include "sqlock/transaction.hpp"

#include "base/owner.hpp"
#include "base/validate.hpp"
#include "contract/backend.hpp"
#include "state/access.hpp"
#include "state/connection_pool.hpp"
#include "state/locker_state.hpp"
#include "waiting/contention_text.hpp"
#include "waiting/wait_loop.hpp"

namespace sqlock {
namespace {

using clock = std::chrono::steady_clock;

// A row that exists only inside one transaction needs no real lease; this
// one is what a reader of an uncommitted row (none: the row is deleted
// before anyone can see it) or a crash between insert and delete (undone
// with the transaction) would meet.
constexpr duration row_lease = std::chrono::seconds(60);

// The wait of a transaction-scoped lock: the wait loop's claimant, without
// a place in line (its row never outlives the transaction, so it cannot
// hold one).
class TransactionWaiting final : public detail::Claimant {
  public:
    TransactionWaiting(detail::LockerState& s, Transaction& tx, const std::string& name,
                       duration wait)
        : s_(s),
          tx_(tx),
          names_{name},
          owner_(detail::make_owner({})),
          deadline_(clock::now() + wait) {}

    const std::vector<std::string>& names() const override { return names_; }
    bool takes_place() const override { return false; }
    const std::string& locked_by() const override { return owner_.locked_by; }
    std::string subject() const override {
        return "lock '" + detail::printable(names_.front()) + "'";
    }
    // The attempt runs in the caller's transaction, which a broken link or a
    // read-only server has ended: the caller's to begin again.
    bool waits_through_obstacles() const override { return false; }

    bool attempt(std::int64_t /*before*/, detail::Refusal& refusal) override {
        const duration left = std::max(
            duration::zero(), std::chrono::duration_cast<duration>(deadline_ - clock::now()));
        id_ = s_.pool->with([&](detail::Connection& own) {
            return s_.backend->try_lock_transaction(tx_, own, names_.front(), owner_.locked_by,
                                                    row_lease, left);
        });
        if (id_) return true;
        // Held by a committed row: the wait loop looks again no later than
        // when it runs out, and the error names it. A read of its own, so
        // that a broken link here never sends the attempt, on the caller's
        // transaction, a second time; unread, the holder is unknown.
        try {
            if (auto holder = s_.pool->with(
                    [&](detail::Connection& own) { return own.find(names_.front()); }))
                refusal.holders.push_back(std::move(*holder));
        } catch (const error&) {
        }
        return false;
    }

    // No pushes: waiting for a listener to connect (up to 2 s) would hold the
    // caller's transaction open past its wait, and the holders it waits for
    // are mostly rows that no release of sqlock's announces (the other
    // transactions' own rows). It looks again on the polling schedule.
    bool wakes_by_push() const override { return false; }

    std::string refused_text(const detail::Refusal& refusal) const override {
        std::string text = "lock '" + detail::printable(names_.front()) + "' is held";
        if (auto info = refusal.first_holder()) text += " by " + detail::holder_text(info);
        return text;
    }

    std::int64_t id() const { return *id_; }

  private:
    detail::LockerState& s_;
    Transaction& tx_;
    const std::vector<std::string> names_;
    const detail::Owner owner_;
    const clock::time_point deadline_;
    std::optional<std::int64_t> id_;
};

}  // namespace

std::int64_t lock_transaction(Transaction& tx, const Locker& locker, const std::string& name,
                              duration wait) {
    detail::LockerState& s = *detail::Access::session(locker);
    detail::validate_lock_name(name);
    detail::validate_non_negative(wait, "wait");
    if (tx.backend() != s.backend->name())
        throw error(errc::invalid_argument,
                    "a " + tx.backend() + " transaction cannot take lock '" +
                        detail::printable(name) + "' of a " + s.backend->name() + " lock table");
    if (!tx.in_transaction())
        throw error(errc::invalid_argument,
                    "a transaction-scoped lock of '" + detail::printable(name) +
                        "' needs an open transaction: outside one it would end at once");
    TransactionWaiting waiting(s, tx, name, wait);
    LockOptions terms;
    terms.wait = wait;
    detail::wait_for(s, waiting, terms);
    return waiting.id();
}

}  // namespace sqlock
