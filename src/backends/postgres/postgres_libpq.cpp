#include "postgres_libpq.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <pqxx/except>

namespace sqlock::detail::postgres {
namespace {

// As libpqxx reports it: a link that is gone (or a result that never came)
// is broken_connection; anything the server said is sql_error with its
// SQLSTATE.
PqResult checked(PGconn* conn, PGresult* res, const std::string& query) {
    PqResult out(res);
    const ExecStatusType status = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK) return out;
    if (!res || PQstatus(conn) == CONNECTION_BAD) {
        const char* msg = res ? PQresultErrorMessage(res) : "";
        throw pqxx::broken_connection(*msg ? msg : PQerrorMessage(conn));
    }
    const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    throw pqxx::sql_error(PQresultErrorMessage(res), query, state);
}

// Waits until `conn`'s socket has something to read, or the deadline
// passes: then shuts the socket down (not close: the descriptor stays
// libpq's), so the connection can never be used again, and says false.
bool await_readable(PGconn* conn, PqDeadline& deadline) {
    using clock = std::chrono::steady_clock;
    const int fd = PQsocket(conn);
    for (;;) {
        const auto left = deadline.at - clock::now();
        if (left <= clock::duration::zero()) break;
        // Rounded up: poll() must not wake just short of the deadline and
        // find it not yet passed, over and over.
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        pollfd p{fd, POLLIN, 0};
        const int n = poll(&p, 1, ms > INT_MAX ? INT_MAX : static_cast<int>(ms));
        if (n > 0 || (n < 0 && errno != EINTR)) return true;  // PQconsumeInput tells which
    }
    ::shutdown(fd, SHUT_RDWR);
    deadline.passed = true;
    return false;
}

// The results of the query just sent, as PQexec gives them: the last, or the
// first error. Null when the link broke or the deadline passed.
PGresult* collect(PGconn* conn, PqDeadline& deadline) {
    PGresult* kept = nullptr;
    for (;;) {
        while (PQisBusy(conn)) {
            if (!await_readable(conn, deadline) || !PQconsumeInput(conn)) {
                PQclear(kept);
                return nullptr;
            }
        }
        PGresult* r = PQgetResult(conn);
        if (!r) return kept;
        if (kept && PQresultStatus(kept) == PGRES_FATAL_ERROR) {
            PQclear(r);
        } else {
            PQclear(kept);
            kept = r;
        }
    }
}

// What a call that was sent (`sent`: libpq queued and flushed it) answered.
PqResult answer(PGconn* conn, int sent, PqDeadline& deadline, const std::string& query) {
    if (!sent) throw pqxx::broken_connection(PQerrorMessage(conn));
    PGresult* res = collect(conn, deadline);
    if (deadline.passed) throw pqxx::broken_connection("no answer in time");
    return checked(conn, res, query);
}

}  // namespace

std::int64_t PqResult::int64(int row, int col) const {
    const char* s = text(row, col);
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s, s + std::strlen(s), v);
    if (ec != std::errc() || *end != '\0')
        throw pqxx::conversion_error(std::string("not an integer: '") + s + "'");
    return v;
}

std::int64_t PqResult::binary_int64(int row, int col) const {
    if (PQgetlength(r_.get(), row, col) != 8)
        throw pqxx::conversion_error("not a binary bigint (" +
                                     std::to_string(PQgetlength(r_.get(), row, col)) + " bytes)");
    const auto* b = reinterpret_cast<const unsigned char*>(PQgetvalue(r_.get(), row, col));
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | b[i];  // network byte order
    return static_cast<std::int64_t>(v);
}

std::int64_t PqResult::binary_timestamp_ms(int row, int col) const {
    // Microseconds since 2000-01-01 00:00 UTC (integer timestamps, the only
    // kind since PostgreSQL 10).
    constexpr std::int64_t unix_ms_at_2000 = 946684800000;
    const std::int64_t us = binary_int64(row, col);
    const std::int64_t ms = us / 1000 - (us % 1000 < 0 ? 1 : 0);
    return ms + unix_ms_at_2000;
}

void pq_prepare(PGconn* conn, const std::string& name, const std::string& sql, PqDeadline& deadline,
                const char* setup) {
    if (!setup) {
        answer(conn, PQsendPrepare(conn, name.c_str(), sql.c_str(), 0, nullptr), deadline, sql);
        return;
    }
    // One simple query, one implicit transaction: if PREPARE fails, the
    // setup is undone with it. Names are ours ("key/hash"): no quote in them.
    const std::string both = std::string(setup) + "PREPARE \"" + name + "\" AS " + sql;
    answer(conn, PQsendQuery(conn, both.c_str()), deadline, both);
}

PqResult pq_exec_simple(PGconn* conn, const std::string& sql, PqDeadline& deadline) {
    return answer(conn, PQsendQuery(conn, sql.c_str()), deadline, sql);
}

PqResult pq_exec_prepared(PGconn* conn, const std::string& name, const std::string& sql,
                          PqParams params, PqDeadline& deadline, PqFormat format) {
    return answer(conn,
                  PQsendQueryPrepared(conn, name.c_str(), static_cast<int>(params.size()),
                                      params.begin(), nullptr, nullptr, static_cast<int>(format)),
                  deadline, sql);
}

namespace {

bool has_sqlstate(const pqxx::sql_error& e, const char* state) {
    return e.sqlstate() == state;
}

// A statement kept since its table was made again with other column types:
// "cached plan must not change result type". Nothing ran.
constexpr const char* stale_plan = "0A000";

// Drops `name` from the server session lent for it, which may be another
// than the one holding it stale (then 26000: nothing to drop there).
void forget_stale(PGconn* conn, const std::string& name, PqDeadline& deadline) {
    try {
        pq_exec_simple(conn, "DEALLOCATE \"" + name + "\"", deadline);
    } catch (const pqxx::sql_error&) {
        // not on that session: the next try finds it stale, or missing
    }
}

// Pipeline mode for one call. Left by leave() once the Sync's result is
// in; a connection that cannot leave it (a result left unread) would make
// its next call wait for an answer that never comes, so its socket is shut
// down instead and the call reports it broken: the pool discards it.
class Pipeline {
  public:
    explicit Pipeline(PGconn* conn) : conn_(conn) {
        if (!PQenterPipelineMode(conn)) throw pqxx::broken_connection(PQerrorMessage(conn));
    }
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;
    ~Pipeline() {
        // On the way out of a failed call, whose link is broken already.
        if (conn_ && !PQexitPipelineMode(conn_)) ::shutdown(PQsocket(conn_), SHUT_RDWR);
    }
    void leave() {
        PGconn* conn = conn_;
        conn_ = nullptr;
        if (PQexitPipelineMode(conn)) return;
        const std::string why =
            std::string("could not leave pipeline mode: ") + PQerrorMessage(conn);
        ::shutdown(PQsocket(conn), SHUT_RDWR);
        throw pqxx::broken_connection(why);
    }

  private:
    PGconn* conn_;
};

using OwnedResult = std::unique_ptr<PGresult, decltype(&PQclear)>;

// Parse `name` and run it, before one Sync (pq_exec_kept). The results come
// in order: the Parse's, the Execute's (PIPELINE_ABORTED after a failed
// Parse), then whatever the Sync's commit adds (an error: a serialization
// failure, a deferred constraint) and the Sync's own. All are read, up to
// the Sync's, so that the connection leaves pipeline mode with nothing
// pending. The first error, else the Execute's result.
PqResult prepare_and_run(PGconn* conn, const std::string& name, const std::string& sql,
                         PqParams params, PqDeadline& deadline, PqFormat format) {
    Pipeline pipeline(conn);
    const bool sent =
        PQsendPrepare(conn, name.c_str(), sql.c_str(), 0, nullptr) &&
        PQsendQueryPrepared(conn, name.c_str(), static_cast<int>(params.size()), params.begin(),
                            nullptr, nullptr, static_cast<int>(format)) &&
        PQpipelineSync(conn);
    if (!sent) throw pqxx::broken_connection(PQerrorMessage(conn));
    OwnedResult first_error(nullptr, &PQclear), rows(nullptr, &PQclear);
    // More of the answer read in, by the deadline; else the link is broken.
    auto read_more = [&] {
        if (!await_readable(conn, deadline) || !PQconsumeInput(conn))
            throw pqxx::broken_connection(deadline.passed ? "no answer in time"
                                                          : PQerrorMessage(conn));
    };
    int results = 0;         // so far, the Parse's first
    bool said_none = false;  // the last PQgetResult: none (the end of one command's)
    for (;;) {
        while (PQisBusy(conn)) read_more();
        OwnedResult r(PQgetResult(conn), &PQclear);
        if (!r) {
            // Between one command's results and the next's, and after a
            // broken link. Twice in a row: libpq has nothing buffered for
            // the next, so wait for it to come.
            if (PQstatus(conn) == CONNECTION_BAD)
                throw pqxx::broken_connection(PQerrorMessage(conn));
            if (said_none) read_more();
            said_none = true;
            continue;
        }
        said_none = false;
        const ExecStatusType status = PQresultStatus(r.get());
        const bool executes = ++results == 2;
        if (status == PGRES_PIPELINE_SYNC) break;
        if (status == PGRES_FATAL_ERROR && !first_error)
            first_error = std::move(r);
        else if (executes && (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK))
            rows = std::move(r);
    }
    pipeline.leave();
    if (first_error) return checked(conn, first_error.release(), sql);  // throws
    return checked(conn, rows.release(), sql);
}

}  // namespace

PqResult pq_exec_kept(PGconn* conn, const std::string& name, const std::string& sql,
                      PqParams params, PqDeadline& deadline, PqFormat format, bool& parsed,
                      bool& missed) {
    constexpr int most_misses = 3;
    missed = false;
    // A name this client connection never Parsed is not bound: PgBouncer
    // 1.21 and later, tracking statements per client, close a client that
    // binds one; so its first use prepares and runs it.
    bool bind = parsed;
    for (int miss = 0; miss < most_misses; ++miss) {
        if (bind) {
            try {
                return pq_exec_prepared(conn, name, sql, params, deadline, format);
            } catch (const pqxx::sql_error& e) {
                if (has_sqlstate(e, stale_plan)) {
                    missed = true;
                    forget_stale(conn, name, deadline);
                    continue;
                }
                if (!has_sqlstate(e, "26000")) throw;
                missed = true;
            }
        }
        bind = true;
        // Before the answer: PgBouncer 1.21 and later take the name as this
        // client's with the Parse, whatever the server says to it.
        parsed = true;
        try {
            return prepare_and_run(conn, name, sql, params, deadline, format);
        } catch (const pqxx::sql_error& e) {
            if (!has_sqlstate(e, "42P05")) throw;  // the session has it: bind it
        }
    }
    return pq_exec_params(conn, sql, params, deadline, format);
}

PqResult pq_exec_params(PGconn* conn, const std::string& sql, PqParams params, PqDeadline& deadline,
                        PqFormat format) {
    return answer(conn,
                  PQsendQueryParams(conn, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                    params.begin(), nullptr, nullptr, static_cast<int>(format)),
                  deadline, sql);
}

}  // namespace sqlock::detail::postgres
