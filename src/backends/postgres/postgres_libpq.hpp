// The lock's hot path through libpq itself: acquire, acquire_slot and
// delete_exact (a release without a minimum hold). Everything else, the read
// of the holder after a failed attempt included, goes through libpqxx.
//
// Why not libpqxx, as everywhere else: measured on this project's machine
// (docs/benchmarks.md), libpqxx 6.4 reads the socket twice more
// per statement than libpq needs (two recvfrom calls that find nothing, 12000
// of them for 3000 acquire+release cycles against none for libpq's own
// PQexecPrepared), on top of its result objects. With 8 processes on 2 cores
// those system calls take CPU from the server, which is the limit there.
// The statements are still the ones in postgres_statements.cpp; only the way
// they travel differs. Failures are thrown as libpqxx's exceptions
// (pqxx::sql_error with the SQLSTATE, pqxx::broken_connection), so that one
// mapping (postgres_error.hpp) serves both paths.
//
// Each call waits for its answer itself, with poll(2) up to a deadline
// (PqDeadline), instead of inside libpq, which waits without a limit: the
// hot path needs no watchdog (postgres_watchdog.hpp), whose arming and
// disarming took two mutexes, a search and a clock read per statement (8
// processes: 2% more cycles without it; docs/benchmarks.md).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

namespace sqlock::detail::postgres {

/// A PGresult that owns itself.
class PqResult {
  public:
    explicit PqResult(PGresult* r) noexcept : r_(r) {}
    int rows() const noexcept { return PQntuples(r_.get()); }
    bool empty() const noexcept { return rows() == 0; }
    const char* text(int row, int col) const noexcept { return PQgetvalue(r_.get(), row, col); }
    std::int64_t int64(int row, int col) const;
    /// From a result in binary format: a bigint, and a timestamptz as
    /// milliseconds since the Unix epoch (floored, as to_char's MS is).
    std::int64_t binary_int64(int row, int col) const;
    std::int64_t binary_timestamp_ms(int row, int col) const;

  private:
    struct Clear {
        void operator()(PGresult* r) const noexcept { PQclear(r); }
    };
    std::unique_ptr<PGresult, Clear> r_;
};

/// Parameters as text, as libpq sends them.
using PqParams = std::initializer_list<const char*>;

/// When the answer to a call must have come. If it has not, the call shuts
/// the socket down (the connection is then broken for good, and the caller
/// discards it), sets `passed` and throws pqxx::broken_connection.
struct PqDeadline {
    std::chrono::steady_clock::time_point at;
    bool passed = false;
};

/// PREPARE `name` AS `sql` on `conn`; with `setup` (statements, each ending
/// with ';'), that SQL first, in the same message (no round trip of its own).
void pq_prepare(PGconn* conn, const std::string& name, const std::string& sql, PqDeadline& deadline,
                const char* setup = nullptr);

/// Runs `sql`, one or more statements, as one simple query (one implicit
/// transaction); the last result.
PqResult pq_exec_simple(PGconn* conn, const std::string& sql, PqDeadline& deadline);

/// Result formats, as libpq numbers them. Binary spares the server the
/// text output of the columns it returns, and the client their parsing.
enum class PqFormat { text = 0, binary = 1 };

/// Runs the prepared statement `name` (`sql` is for error reports).
PqResult pq_exec_prepared(PGconn* conn, const std::string& name, const std::string& sql,
                          PqParams params, PqDeadline& deadline, PqFormat format = PqFormat::text);

/// Runs the statement `name` (text `sql`) kept on whichever server session
/// a pooler in transaction or statement mode lends us: the prepared
/// statement when that session has it, else, in the same round trip as the
/// miss is mended, PREPARE and run it there (a pipeline of Parse, Bind and
/// Execute before one Sync: one transaction, one server session). Each
/// server session thus plans the statement once, not every time. A name
/// stands for one SQL text (postgres_statements.hpp), so a statement found
/// under it is ours, whoever prepared it.
///
/// `parsed`: whether this client connection has sent a Parse of `name`
/// (kept by the caller, per connection; set here). Until it has, the call
/// starts with the pipeline instead of binding: PgBouncer 1.21 and later,
/// which track prepared statements per client (max_prepared_statements),
/// close a client connection that binds a name it never parsed.
///
/// Misses and clashes (26000: the lent session lacks it; 42P05: the session
/// lent for the pipeline has it already, so it is bound; 0A000: the
/// session's plan is stale, its table made again with other column types,
/// and is dropped there) did not run it, so the call tries again: steady
/// state is one round trip, a session's first use two. After `most_misses`
/// the statement goes unnamed (pq_exec_params), so no pooler behaviour can
/// loop it. `missed` is set when a server session lent lacked it or held it
/// stale.
///
/// An error at commit (after the Execute's result, before the Sync's) is
/// thrown as the call's; the connection is left out of pipeline mode, or,
/// where libpq cannot leave it, shut down and reported broken.
PqResult pq_exec_kept(PGconn* conn, const std::string& name, const std::string& sql,
                      PqParams params, PqDeadline& deadline, PqFormat format, bool& parsed,
                      bool& missed);

/// Runs `sql` as an unnamed statement (parsed every time).
PqResult pq_exec_params(PGconn* conn, const std::string& sql, PqParams params, PqDeadline& deadline,
                        PqFormat format = PqFormat::text);

}  // namespace sqlock::detail::postgres
