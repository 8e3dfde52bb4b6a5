// Locks scoped to the caller's transaction (Locker::lock_transaction): the
// name's row is inserted and deleted again inside that transaction, so its
// unique-index entry, which nobody else sees committed, keeps every other
// acquirer of the name waiting until the transaction ends, and nothing is
// left behind. Each backend makes one attempt (Backend::try_lock_transaction);
// this file paces the attempts up to the caller's deadline.
#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "sqlock/error.hpp"
#include "sqlock/locker.hpp"
#include "sqlock/transaction.hpp"

#include "backend.hpp"
#include "connection_pool.hpp"
#include "locker_state.hpp"
#include "owner.hpp"
#include "validate.hpp"

namespace sqlock {
namespace {

using clock = std::chrono::steady_clock;

// A row that exists only inside one transaction needs no real lease; this
// one is what a reader of an uncommitted row (none: the row is deleted
// before anyone can see it) or a crash between insert and delete (undone
// with the transaction) would meet.
constexpr duration row_lease = std::chrono::seconds(60);

// Pacing between attempts at a name held by a committed row: 2 ms doubling
// to 100 ms, with jitter so that many transactions do not look in lockstep.
constexpr duration first_pause = std::chrono::milliseconds(2);
constexpr duration longest_pause = std::chrono::milliseconds(100);

}  // namespace

std::int64_t Locker::lock_transaction(Transaction& tx, const std::string& name, duration wait) {
    detail::validate_lock_name(name);
    detail::validate_non_negative(wait, "wait");
    detail::LockerState& s = *state_;
    if (tx.backend() != s.backend->name())
        throw error(errc::invalid_argument,
                    "a " + tx.backend() + " transaction cannot take lock '" +
                        detail::printable(name) + "' of a " + s.backend->name() + " lock table");
    if (!tx.in_transaction())
        throw error(errc::invalid_argument,
                    "a transaction-scoped lock of '" + detail::printable(name) +
                        "' needs an open transaction: outside one it would end at once");
    const detail::Owner owner = detail::make_owner({});
    const clock::time_point deadline = clock::now() + wait;
    std::mt19937 jitter(std::random_device{}());
    duration pause = first_pause;
    for (;;) {
        const duration left = std::max(
            duration::zero(), std::chrono::duration_cast<duration>(deadline - clock::now()));
        std::optional<std::int64_t> id = s.pool->with([&](detail::Connection& own) {
            return s.backend->try_lock_transaction(tx, own, name, owner.locked_by, row_lease, left);
        });
        if (id) return *id;
        const clock::time_point now = clock::now();
        if (now >= deadline) {
            if (wait == duration::zero())
                throw error(errc::busy, "lock '" + detail::printable(name) + "' is held [" +
                                            s.url.redacted + "]");
            throw error(errc::timeout, "lock '" + detail::printable(name) +
                                           "' was still held after waiting " +
                                           format_duration(wait) + " [" + s.url.redacted + "]");
        }
        std::uniform_int_distribution<duration::rep> spread(pause.count() / 2, pause.count());
        const auto sleep = std::min<clock::duration>(duration(spread(jitter)), deadline - now);
        std::this_thread::sleep_for(sleep);
        pause = std::min(longest_pause, pause * 2);
    }
}

}  // namespace sqlock
