// The tables init() creates beside the lock table (common_side_tables,
// contract/table_family.hpp): an operation on one of them that fails because
// the table is missing gets an error naming the setup step, not the
// database's.
#pragma once

#include <string>
#include <utility>

#include "contract/backend.hpp"
#include "sqlock/error.hpp"
#include "state/connection_pool.hpp"
#include "state/locker_state.hpp"

namespace sqlock::detail {

/// Runs `f(connection)` from the Locker's pool (ConnectionPool::with, with
/// `retry_on_broken`). If it throws and `exists` (called on the same
/// connection) says the side table is not there, the error becomes
/// errc::configuration: "no <what> <name> beside lock table <table>:
/// create it with `sqlock init` ...", keeping the backend code.
template <typename Exists, typename F>
auto with_side_table(LockerState& s, const std::string& what, const std::string& name,
                     Exists&& exists, F&& f, bool retry_on_broken = true)
    -> decltype(f(std::declval<Connection&>())) {
    return s.pool->with(
        [&](Connection& c) {
            try {
                return f(c);
            } catch (const error& e) {
                bool missing = false;
                try {
                    missing = !exists(c);
                } catch (const error&) {
                    // The original error says more.
                }
                if (!missing) throw;
                throw error(errc::configuration,
                            "no " + what + " " + name + " beside lock table " + s.table +
                                ": create it with `sqlock init` or Locker::init() [" +
                                s.url.redacted + "]",
                            e.backend_code());
            }
        },
        retry_on_broken);
}

/// with_side_table() for side table `side`: its title and name from the
/// table family, Connection::has(side) for whether it is there.
template <typename F>
auto with_side_table(LockerState& s, SideTable side, F&& f, bool retry_on_broken = true)
    -> decltype(f(std::declval<Connection&>())) {
    return with_side_table(
        s, kind_of(side).title, side_table_name(s.table, side),
        [side](Connection& c) { return c.has(side); }, std::forward<F>(f), retry_on_broken);
}

}  // namespace sqlock::detail
