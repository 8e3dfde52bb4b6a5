// What sqlock::diagnose() reports about a MariaDB/MySQL lock table.
#pragma once

#include "mariadb_target.hpp"
#include "sqlock/diagnosis.hpp"

namespace sqlock::detail::mariadb {

/// Adds the server's version and role, the id ordering, how waiters are
/// woken, the clock difference and the lock table's state to `out`, and a
/// problem line for each thing to fix. Throws sqlock::error when the server
/// cannot be reached.
void diagnose(const MariaTarget& target, Diagnosis& out);

}  // namespace sqlock::detail::mariadb
