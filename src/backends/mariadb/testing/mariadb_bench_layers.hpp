// The batches of the MariaDB baseline's layered rows (sqlock-bench: each of
// sqlock's guarantees priced alone), made by the backend's own statement
// builders so that they cannot drift from what sqlock sends;
// tests/unit/bench_layers_test.cpp checks them against the backend's
// acquire().
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mariadb_target.hpp"

namespace sqlock_bench::mariadb {

/// The words of each layered row, in the order the layers are added one on
/// top of the other. The first is the baseline's own statement sent as
/// text; the others are layer_batch()'s.
std::vector<std::string> layer_names();

/// The batch that acquires `name` for `locked_by` (a lease of an hour) with
/// sqlock's guarantees up to layer `up_to` (1 to 3): the insert and the read
/// of the row it met (insert_and_read, the turn taken for granted), then the
/// name's turn around them (acquire() without a gate), then the queue gate
/// (acquire() for a caller without a place in line). Its one result set has
/// one row: (ours: 1/0, turn: 1/0, id, the other columns of the row).
std::string layer_batch(const sqlock::detail::mariadb::MariaTarget& t, std::size_t up_to,
                        const std::string& name, const std::string& locked_by);

/// The words of the guarded slot row, and its batch: `slot_insert`, the
/// baseline's one statement that takes a slot of semaphore `name`, under
/// the semaphore's turn behind the queue gate and in a transaction with the
/// read of the row it made, as sqlock takes a slot (result as above).
extern const char* const guarded_slot_name;
std::string guarded_slot_batch(const sqlock::detail::mariadb::MariaTarget& t,
                               const std::string& name, const std::string& slot_insert);

}  // namespace sqlock_bench::mariadb
