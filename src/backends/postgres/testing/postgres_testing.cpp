// The PostgreSQL backend's test context (cmake/backend_tests.cmake): rows
// read through libpq, independent of the backend's libpqxx code; the grants
// and codes of PostgreSQL.
#include <libpq-fe.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "backend_context.hpp"

namespace sqlock_test {

namespace {

// The URL as libpq takes it: without sqlock's own `pooler` parameter.
std::string libpq_url(std::string url) {
    for (const char* sep : {"?", "&"}) {
        std::size_t at = url.find(std::string(sep) + "pooler=");
        if (at == std::string::npos) continue;
        std::size_t end = url.find('&', at + 1);
        if (end == std::string::npos)
            url.erase(at);
        else
            url.erase(at + 1, end - at);  // keeps `sep`, drops "pooler=...&"
        break;
    }
    return url;
}

std::vector<SqlRow> query(const std::string& url, const std::string& sql) {
    PGconn* conn = PQconnectdb(libpq_url(url).c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
        std::string msg = PQerrorMessage(conn);
        PQfinish(conn);
        // libpq does not echo passwords, but keep even the URL out of logs.
        throw std::runtime_error("query: cannot connect: " + msg);
    }
    PGresult* r = PQexec(conn, sql.c_str());
    auto status = PQresultStatus(r);
    std::vector<SqlRow> rows;
    if (status == PGRES_TUPLES_OK) {
        for (int i = 0; i < PQntuples(r); ++i) {
            SqlRow row;
            for (int c = 0; c < PQnfields(r); ++c) {
                if (PQgetisnull(r, i, c))
                    row.emplace_back();
                else
                    row.emplace_back(std::string(PQgetvalue(r, i, c), PQgetlength(r, i, c)));
            }
            rows.push_back(std::move(row));
        }
    }
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    PQfinish(conn);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw std::runtime_error("query: " + msg + " in: " + sql);
    return rows;
}

// The table's rights, and USAGE on its id sequence (a bigserial's nextval).
std::string grant_table_use_sql(const std::string& table, const std::string& account) {
    return "GRANT SELECT, INSERT, UPDATE, DELETE ON " + table + " TO " + account +
           "; GRANT USAGE ON SEQUENCE " + table + "_id_seq TO " + account;
}

}  // namespace

BackendHooks postgres_test_hooks() {
    BackendHooks hooks;
    hooks.query = query;
    hooks.grant_table_use_sql = grant_table_use_sql;
    hooks.privilege_denied_code = "42501";  // SQLSTATE insufficient_privilege
    return hooks;
}

}  // namespace sqlock_test
