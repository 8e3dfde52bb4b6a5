// The needs every backend suite can name (needs.hpp), judged against the
// backend under test, the path to it and the set-up. A test declares one as
// the tag [needs:NAME]:
//
//   server          a database server (accounts, grants, a network, a clock
//                   of its own): not on an embedded database
//   embedded        an embedded database (a file, this process's clock)
//   transactions    a transaction of several statements on the path to the
//                   database: not through a pooler in statement mode
//   sessions        a session kept from one statement to the next (LISTEN,
//                   session locks, prepared statements): not through a
//                   pooler in transaction or statement mode
//   cut-off         a way to cut a holder off its database: a server
//                   (through a relay), or an embedded database whose test
//                   context can hold its write lock (hold_write_lock and
//                   patient_url)
//   counted-deletes a way to count the transactions that deleted rows
//                   (delete_log_sql or committed_transactions)
//   schema-waits    a schema change (init's ALTER TABLE) that waits for the
//                   transactions that have read the table: not on a Galera
//                   cluster, whose schema changes run in total order and
//                   abort them (schema_change_passes_readers)
//   <hook>          one hook of the backend's test context (BackendHooks):
//                   table_dump_sql, epoch_ms_sql, odd_timestamp_rows, ...
//   server-script   the test server's script ($SQLOCK_TEST_<ENV>_SCRIPT),
//                   for a test that starts or stops servers of its own, or
//                   restarts the test server, or counts on what the script
//                   set up on it (its roles, what it logs); required where
//                   the server is ($SQLOCK_TEST_REQUIRE_<ENV>)
//   server-dir      the test server's directory ($SQLOCK_TEST_<ENV>_DIR,
//                   the DIR given to the script's start), for a test that
//                   reads the server's log there or has the script restart
//                   it; required as server-script is
//   libfaketime     libfaketime's preload library; required under
//                   $SQLOCK_TEST_REQUIRE_ALL=1
//
// The first seven and the hooks are what a test applies to: where one is
// missing, the test is skipped there, never a failure. The last three are a
// set-up: missing where the run requires them, the test fails.
#pragma once

#include <string>
#include <vector>

#include "needs.hpp"

namespace sqlock_test {

/// The needs above, for the backend under test (backend_context()) and the
/// URL of its test server as the suite's main set it.
std::vector<Need> backend_needs();

/// libfaketime's preload library under Debian's multiarch directory, or ""
/// when it is not installed.
const std::string& libfaketime_path();

}  // namespace sqlock_test
