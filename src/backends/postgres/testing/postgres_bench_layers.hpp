// The statements of the PostgreSQL baseline's layered rows (sqlock-bench:
// each of sqlock's guarantees priced alone), taken from the backend's own
// statement builders so that they cannot drift from what sqlock sends;
// tests/unit/bench_layers_test.cpp checks them against the backend's set.
#pragma once

#include <string>
#include <vector>

#include "postgres_target.hpp"

namespace sqlock_bench::postgres {

/// One layer: the acquisition with sqlock's guarantees up to it and the
/// release that goes with it.
struct LayerStatements {
    std::string acquire;  ///< $1 lockstring, $2 lease ms, $3 locked_by[, $4 turn[, $5 name]]
    int acquire_params;   ///< how many of those it takes
    /// "" for the baseline's own release by id and owner; else sqlock's,
    /// with $1 id, $2 locked_by, $3 turn name, $4 its channel.
    std::string release;
};

/// The layers, in the order they are added one on top of the other: the
/// take-over of an expired row, the name's turn (stmt::acquire), the queue
/// gate (stmt::acquire_gated), the release's wake-up (stmt::delete_exact).
std::vector<LayerStatements> layer_statements(const sqlock::detail::postgres::PgTarget& target);

/// The words of each layer's row, in the same order.
std::vector<std::string> layer_names();

}  // namespace sqlock_bench::postgres
