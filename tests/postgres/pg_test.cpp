#include "pg_test.hpp"

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "test_support.hpp"

namespace pg_test {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

std::string url() {
    return env("SQLOCK_TEST_PG_URL");
}

std::string password() {
    const std::string p = sqlock_test::password_of(url());
    if (p.empty()) throw std::runtime_error("test URL has no user:password@");
    return p;
}

std::string unique(const std::string& prefix) {
    static std::atomic<int> n{0};
    return prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(++n);
}

sqlock::LockerOptions table(const std::string& name) {
    sqlock::LockerOptions o;
    o.table = name;
    return o;
}

std::string query(const std::string& u, const std::string& sql) {
    PGconn* conn = PQconnectdb(u.c_str());
    if (PQstatus(conn) != CONNECTION_OK) {
        PQfinish(conn);
        throw std::runtime_error("pg_test::query: cannot connect");  // no message: it names the URL
    }
    PGresult* r = PQexec(conn, sql.c_str());
    auto status = PQresultStatus(r);
    std::string value;
    if (status == PGRES_TUPLES_OK && PQntuples(r) > 0) value = PQgetvalue(r, 0, 0);
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    PQfinish(conn);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
        throw std::runtime_error("pg_test::query: " + msg);
    return value;
}

std::string waiting_sessions(const std::string& u, const std::string& table) {
    // Two-key advisory locks show their keys as classid/objid (oids, so the
    // int4 hash is compared as its unsigned value) with objsubid 2.
    return query(u,
                 "SELECT coalesce(string_agg(pid::text, ',' ORDER BY pid), '') FROM pg_locks"
                 " WHERE locktype = 'advisory' AND mode = 'ShareLock' AND granted"
                 " AND objsubid = 2 AND classid::bigint = (hashtext('sqlock waiting ' || '" +
                     table + "'::regclass::oid::text)::bigint & 4294967295)");
}

void restart_server() {
    sqlock_test::declares_need("server-script", "pg_test::restart_server()");
    sqlock_test::declares_need("server-dir", "pg_test::restart_server()");
    std::string cmd = "'" + env("SQLOCK_TEST_PG_SCRIPT") + "' restart '" +
                      env("SQLOCK_TEST_PG_DIR") + "' >/dev/null";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("restarting the server failed");
}

namespace {

// Where the server logs, for a test that declared it may read there.
std::string server_log_path(const std::string& helper) {
    sqlock_test::declares_need("server-script", helper);
    sqlock_test::declares_need("server-dir", helper);
    return env("SQLOCK_TEST_PG_DIR") + "/postgres.log";
}

}  // namespace

std::string server_log(std::size_t from) {
    std::ifstream in(server_log_path("pg_test::server_log()"), std::ios::binary);
    if (!in) throw std::runtime_error("cannot read the server log");
    in.seekg(static_cast<std::streamoff>(from));
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::size_t server_log_size() {
    return static_cast<std::size_t>(
        std::filesystem::file_size(server_log_path("pg_test::server_log_size()")));
}

sqlock::Locker logged_locker(const sqlock_test::Database& db, const std::string& app) {
    return sqlock::Locker(with_param(with_user(db.url, "sqlock_logged"), "application_name", app),
                          sqlock_test::locker_options().table(db.table).pool_size(1));
}

void create_bare_table(const std::string& url, const std::string& table,
                       const std::string& locked_by_type) {
    query(url, "DROP TABLE IF EXISTS " + table + "; CREATE TABLE " + table +
                   " (id bigserial PRIMARY KEY, lockstring varchar(128) NOT NULL UNIQUE,"
                   " created timestamptz NOT NULL DEFAULT now(),"
                   " expires timestamptz NOT NULL, locked_by " +
                   locked_by_type + ")");
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t pos = text.find(needle); pos != std::string::npos;
         pos = text.find(needle, pos + needle.size()))
        ++n;
    return n;
}

bool leaks_password(const std::string& text) {
    return text.find(password()) != std::string::npos;
}

long long last_id_drawn(const std::string& url, const std::string& table) {
    std::string v = query(url, "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('" +
                                   table + "', 'id')), 0)");
    return std::stoll(v);
}

}  // namespace pg_test
