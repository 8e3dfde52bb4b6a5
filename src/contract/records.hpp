// Reading the core's records from a query's rows (statement_set.hpp): the
// one decoder of a lock row, of a run and of a pause, whatever the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "contract/claim.hpp"
#include "contract/statement_set.hpp"
#include "sqlock/pause.hpp"
#include "sqlock/run_records.hpp"

namespace sqlock::detail {

class Connection;

/// A field as an integer, a decimal, a boolean (an integer, true unless 0;
/// t/f; true/false) or text; NULL reads as 0, false or "". Numbers are read
/// as the databases write them, whatever the program's locale.
std::int64_t as_int64(const Field& f);
double as_double(const Field& f);
bool as_bool(const Field& f);
const std::string& as_text(const Field& f);

/// The first row of `rows`; throws errc::backend naming what was done
/// (describe_query) when the database sent none.
const std::vector<Field>& first_row(const Rows& rows, Query key, const std::vector<Value>& params);

/// Runs `key` on `c` and reads the first column of its first row as an
/// integer (a count, an id, a time); errors as first_row().
std::int64_t query_int64(Connection& c, Query key, const std::vector<Value>& params = {});

/// A lock row from the lock row columns (statement_set.hpp) starting at
/// `first`.
Row read_lock_row(const std::vector<Field>& row, std::size_t first = 0);

/// A run from the run columns (statement_set.hpp).
RunRecord read_run(const std::vector<Field>& row);
std::vector<RunRecord> read_runs(const Rows& rows);

/// A pause from the pause columns starting at `first`.
PauseInfo read_pause(const std::vector<Field>& row, std::size_t first = 0);

/// The answer of Query::start_run_unless_paused (`params` its parameters):
/// the run id, or the pause in force. A row with neither is errc::backend,
/// never a pause without a name.
RunStartOutcome read_run_start(const std::vector<Field>& row, const std::vector<Value>& params);

}  // namespace sqlock::detail
