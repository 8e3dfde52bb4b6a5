#include "postgres_libpq.hpp"

#include <charconv>
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

void pq_prepare(PGconn* conn, const std::string& name, const std::string& sql, const char* setup) {
    if (!setup) {
        checked(conn, PQprepare(conn, name.c_str(), sql.c_str(), 0, nullptr), sql);
        return;
    }
    // One simple query, one implicit transaction: if PREPARE fails, the
    // setup is undone with it. Names are ours ("key/hash"): no quote in them.
    const std::string both = std::string(setup) + "; PREPARE \"" + name + "\" AS " + sql;
    checked(conn, PQexec(conn, both.c_str()), both);
}

PqResult pq_exec_prepared(PGconn* conn, const std::string& name, const std::string& sql,
                          PqParams params, PqFormat format) {
    return checked(conn,
                   PQexecPrepared(conn, name.c_str(), static_cast<int>(params.size()),
                                  params.begin(), nullptr, nullptr, static_cast<int>(format)),
                   sql);
}

PqResult pq_exec_params(PGconn* conn, const std::string& sql, PqParams params, PqFormat format) {
    return checked(conn,
                   PQexecParams(conn, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                params.begin(), nullptr, nullptr, static_cast<int>(format)),
                   sql);
}

}  // namespace sqlock::detail::postgres
