// The guard: a held lock making the caller's own transaction commit only
// while the lock is held (sqlock/transaction.hpp). Each backend writes the
// statement (Backend::guard_statement); the database objects it calls are
// created by init from sql/<backend>/schema.sql.
#include <cstdint>
#include <string>
#include <vector>

#include "sqlock/error.hpp"
#include "sqlock/leadership.hpp"
#include "sqlock/lock.hpp"
#include "sqlock/lock_set.hpp"
#include "sqlock/transaction.hpp"

#include "base/validate.hpp"
#include "contract/backend.hpp"
#include "held/held_claim.hpp"

namespace sqlock {
namespace {

// The text every backend's guard error carries (sql/*/schema.sql).
constexpr const char* not_held_text = "is no longer held by this holder";

bool says_missing(const error& e) {
    const std::string& code = e.backend_code();
    const std::string what = e.what();
    // PostgreSQL: undefined function; MariaDB: no such procedure; SQLite:
    // no such table (the view).
    return code == "42883" || code.rfind("1305/", 0) == 0 ||
           what.find("no such table") != std::string::npos;
}

// Whether `e`, an error of a transaction guarded on `backend`, may be the
// database aborting it for a write elsewhere rather than making that write
// wait: MariaDB on Galera, where certification and the node applying a
// take-over from another node abort it (1213), and a node that left the
// cluster cannot commit (1180, 1047).
bool aborted_by_another_write(const std::string& backend, const error& e) {
    if (backend != "mariadb") return false;
    const std::string& code = e.backend_code();
    return code.rfind("1213/", 0) == 0 || code.rfind("1180/", 0) == 0 ||
           code.rfind("1047/", 0) == 0;
}

// After such an abort: lost when `still_held()` says no, else busy; `e`
// itself when the database cannot say.
template <typename Held>
[[noreturn]] void aborted(const error& e, const std::string& name, Held&& still_held) {
    bool held = true;
    try {
        held = still_held();
    } catch (const error&) {
        throw e;
    }
    const std::string cause = e.what();
    if (!held)
        throw error(errc::lost,
                    "lock '" + detail::printable(name) +
                        "' is no longer held by this holder: the database aborted its guarded "
                        "transaction, and nothing of it was committed (" +
                        cause + ")",
                    e.backend_code());
    throw error(errc::busy,
                "the transaction guarded by lock '" + detail::printable(name) +
                    "' lost a race with another write, and nothing of it was committed; the "
                    "lock is still held: roll back and try again (" +
                    cause + ")",
                e.backend_code());
}

void check_usable(Transaction& tx, const GuardStatement& g) {
    if (tx.backend() != g.backend)
        throw error(errc::invalid_argument, "a " + tx.backend() +
                                                " transaction cannot guard lock '" +
                                                detail::printable(g.name) + "', which lives in a " +
                                                g.backend + " database");
    if (!tx.in_transaction())
        throw error(errc::invalid_argument,
                    "guarding with lock '" + detail::printable(g.name) +
                        "' needs an open transaction: outside one each statement commits "
                        "alone, and the guard would protect nothing");
}

// `still_held`: asks the database whether the lock is still this holder's,
// after an abort by another write.
template <typename Held>
void run_guard(Transaction& tx, const GuardStatement& g, Held&& still_held) {
    try {
        tx.run(g.sql, g.params);
    } catch (const error& e) {
        if (aborted_by_another_write(g.backend, e)) aborted(e, g.name, still_held);
        const std::string what = e.what();
        if (what.find(not_held_text) != std::string::npos)
            throw error(errc::lost,
                        "lock '" + detail::printable(g.name) +
                            "' is no longer held by this holder (it ran out and was taken "
                            "over, or was released; or the transaction is on another "
                            "database): the guarded transaction must roll back",
                        e.backend_code());
        if (says_missing(e))
            throw error(errc::configuration,
                        "the guard of lock '" + detail::printable(g.name) +
                            "' is missing in this transaction's database: run `sqlock init` "
                            "on the lock's database as the table's owner, and guard only "
                            "transactions on that database (" +
                            what + ")",
                        e.backend_code());
        throw;
    }
}

}  // namespace

GuardStatement Lock::guard_statement() const {
    if (!active())
        throw error(errc::invalid_argument,
                    "a released or moved-from lock cannot guard a transaction");
    const detail::HeldClaim& st = *held_;
    const detail::ClaimEntry& e = st.claim.only();
    return st.locker->backend->guard_statement(st.ids.front(), st.locked_by,
                                               e.shared() ? e.name : "", st.name());
}

std::vector<GuardStatement> LockSet::guard_statements() const {
    if (!active())
        throw error(errc::invalid_argument,
                    "a released or moved-from lock set cannot guard a transaction");
    const detail::HeldClaim& st = *held_;
    std::vector<GuardStatement> out;
    for (std::size_t i = 0; i < st.claim.entries.size(); ++i) {
        const detail::ClaimEntry& e = st.claim.entries[i];
        out.push_back(st.locker->backend->guard_statement(st.ids[i], st.locked_by,
                                                          e.shared() ? e.name : "", e.name));
    }
    return out;
}

void guard(Transaction& tx, const Lock& lock) {
    const GuardStatement g = lock.guard_statement();
    check_usable(tx, g);
    if (lock.lost())
        throw error(errc::lost, "lock '" + detail::printable(g.name) +
                                    "' was found lost: its guarded transaction must roll back");
    run_guard(tx, g, [&] { return lock.held(); });
}

void guard(Transaction& tx, const LockSet& set) {
    const std::vector<GuardStatement> all = set.guard_statements();
    for (const GuardStatement& g : all) check_usable(tx, g);
    if (set.lost())
        throw error(errc::lost, "lock set was found lost: its guarded transaction must roll back");
    for (const GuardStatement& g : all) run_guard(tx, g, [&] { return set.held(); });
}

void guard(Transaction& tx, const Leadership& leadership) {
    guard(tx, leadership.lock());
}

void commit_failed(const error& e, const Lock& lock) {
    if (!lock.active() || !aborted_by_another_write(lock.guard_statement().backend, e)) throw e;
    aborted(e, lock.name(), [&] { return lock.held(); });
}

void commit_failed(const error& e, const LockSet& set) {
    if (!set.active()) throw e;
    const std::vector<GuardStatement> all = set.guard_statements();
    if (all.empty() || !aborted_by_another_write(all.front().backend, e)) throw e;
    aborted(e, all.front().name, [&] { return set.held(); });
}

void commit_failed(const error& e, const Leadership& leadership) {
    commit_failed(e, leadership.lock());
}

namespace detail {

GuardStatement Backend::guard_statement(std::int64_t, const std::string&, const std::string&,
                                        const std::string&) const {
    throw error(errc::configuration, "the " + name() + " backend has no guard");
}

std::optional<std::int64_t> Backend::try_lock_transaction(Transaction&, Connection&,
                                                          const std::string&, const std::string&,
                                                          duration, duration) {
    throw error(errc::configuration, "the " + name() + " backend has no transaction locks");
}

}  // namespace detail
}  // namespace sqlock
