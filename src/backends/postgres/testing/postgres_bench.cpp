// The PostgreSQL backend's part of sqlock-bench (tools/bench/bench_backend.hpp,
// cmake/backend_bench.cmake): the baseline, libpq with server-side prepared
// statements, one round trip per statement, autocommit; its layered rows
// run sqlock's own statements (postgres_bench_layers.hpp).
#include <libpq-fe.h>

#include <chrono>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_backend.hpp"
#include "loading/url.hpp"
#include "postgres_bench_layers.hpp"
#include "postgres_statements.hpp"
#include "raw_client.hpp"
#include "target.hpp"

namespace sqlock_bench {
namespace {

namespace pg = sqlock::detail::postgres;

// The lease of every row the baseline writes: an hour, in ms as sqlock's
// statements take it.
constexpr const char* lease_ms = "3600000";

// Owns one PGresult.
class Result {
  public:
    explicit Result(PGresult* r) : r_(r) {}
    ~Result() { PQclear(r_); }
    Result(const Result&) = delete;
    Result& operator=(const Result&) = delete;
    PGresult* get() const { return r_; }

  private:
    PGresult* r_;
};

class RawPostgres final : public RawClient {
  public:
    RawPostgres(const std::string& url, const std::string& table)
        : url_(url),
          table_name_(table),
          table_("\"" + table + "\""),
          owner_(raw_owner_string()),
          target_(sqlock::detail::parse_database_url(url), table, std::chrono::seconds(10)) {
        conn_ = PQconnectdb(url.c_str());
        if (PQstatus(conn_) != CONNECTION_OK) {
            std::string msg = PQerrorMessage(conn_);
            PQfinish(conn_);
            throw std::runtime_error("raw PostgreSQL client: cannot connect to " + redact_url(url) +
                                     ": " + scrub_password(trimmed(msg), url));
        }
        // DROP TABLE IF EXISTS and friends talk back; nobody needs to read it.
        PQsetNoticeProcessor(
            conn_, [](void*, const char*) {}, nullptr);
        try {
            // What sqlock's own sessions run with, whatever the server's
            // defaults (a test server may have hostile ones): the same
            // isolation, and no server-side timeout in the way.
            exec(std::string("SET default_transaction_isolation = 'read committed'; "
                             "SET statement_timeout = 0; SET lock_timeout = 0; "
                             "SET idle_in_transaction_session_timeout = 0") +
                 (PQserverVersion(conn_) >= 140000 ? "; SET idle_session_timeout = 0" : ""));
            prepare("acquire", "INSERT INTO " + table_ +
                                   " (lockstring, created, expires, locked_by)"
                                   " VALUES ($1, now(), now() + interval '1 hour', $2)"
                                   " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
            prepare("release", "DELETE FROM " + table_ + " WHERE id = $1 AND locked_by = $2");
            prepare("acquire_many", "INSERT INTO " + table_ +
                                        " (lockstring, created, expires, locked_by)"
                                        " SELECT n, now(), now() + interval '1 hour', $2"
                                        " FROM unnest($1::text[]) AS n"
                                        " ON CONFLICT (lockstring) DO NOTHING");
            prepare("release_many", "DELETE FROM " + table_ +
                                        " WHERE lockstring = ANY ($1::text[]) AND locked_by = $2");
            prepare("slot", "INSERT INTO " + table_ +
                                " (lockstring, created, expires, locked_by)"
                                " SELECT $1 || '#' || n, now(), now() + interval '1 hour', $3"
                                " FROM generate_series(1, $2::int) AS n WHERE NOT EXISTS"
                                " (SELECT 1 FROM " +
                                table_ +
                                " WHERE lockstring = $1 || '#' || n) ORDER BY n LIMIT 1"
                                " ON CONFLICT (lockstring) DO NOTHING RETURNING id");
            prepare_layers();
        } catch (...) {
            PQfinish(conn_);
            throw;
        }
    }

    bool cycle_layer(std::size_t up_to, const std::string& name) override {
        const postgres::LayerStatements& layer = layers_.at(up_to);
        const std::string acquire = "layer_" + std::to_string(up_to);
        // sqlock's parameters: the name, the lease, the owner, the name's
        // turn, the name waited for.
        const std::string turn = pg::turn_name(name);
        const char* params[] = {name.c_str(), lease_ms, owner_.c_str(), turn.c_str(), name.c_str()};
        const std::int64_t id = id_of(run(acquire.c_str(), params, layer.acquire_params));
        if (!id) return false;
        const std::string text = std::to_string(id);
        const std::string channel = pg::name_channel(target_, turn);
        Result r(layer.release.empty()
                     ? run("release", {text.c_str(), owner_.c_str()})
                     : run((acquire + "_release").c_str(),
                           {text.c_str(), owner_.c_str(), turn.c_str(), channel.c_str()}));
        if (std::string(PQcmdTuples(r.get())) != "1")
            throw std::runtime_error("raw layered release found no row");
        return true;
    }

    ~RawPostgres() override { PQfinish(conn_); }

    std::int64_t try_acquire(const std::string& name) override {
        return id_of(run("acquire", {name.c_str(), owner_.c_str()}));
    }

    void release(std::int64_t id) override {
        const std::string text = std::to_string(id);
        Result r(run("release", {text.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(r.get())) != "1")
            throw std::runtime_error("raw release found no row");
    }

    void cycle_many(const std::vector<std::string>& names) override {
        std::string array = "{";
        for (const std::string& n : names) array += (array.size() > 1 ? ",\"" : "\"") + n + "\"";
        array += "}";
        const std::string count = std::to_string(names.size());
        Result in(run("acquire_many", {array.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(in.get())) != count)
            throw std::runtime_error("raw set found a row held");
        Result out(run("release_many", {array.c_str(), owner_.c_str()}));
        if (std::string(PQcmdTuples(out.get())) != count)
            throw std::runtime_error("raw set release found a row gone");
    }

    std::int64_t try_acquire_slot(const std::string& name, int capacity) override {
        const std::string cap = std::to_string(capacity);
        return id_of(run("slot", {name.c_str(), cap.c_str(), owner_.c_str()}));
    }

    void fill(const std::string& prefix, std::int64_t first, std::int64_t count,
              bool expired) override {
        const std::string created = expired ? "now() - interval '2 hours'" : "now()";
        const std::string expires =
            expired ? "now() - interval '1 hour'" : "now() + interval '1 day'";
        const std::string a = std::to_string(first), b = std::to_string(first + count - 1);
        Result r(check(PQexecParams(conn_,
                                    ("INSERT INTO " + table_ +
                                     " (lockstring, created, expires, locked_by)"
                                     " SELECT $1 || g, " +
                                     created + ", " + expires +
                                     ", $4 FROM generate_series($2::bigint, $3::bigint) AS g")
                                        .c_str(),
                                    4, nullptr,
                                    std::vector<const char*>{prefix.c_str(), a.c_str(), b.c_str(),
                                                             owner_.c_str()}
                                        .data(),
                                    nullptr, nullptr, 0),
                       "bulk INSERT"));
        // A long-lived table has statistics; give the planner the same.
        exec("ANALYZE " + table_);
    }

    std::int64_t purge_expired_at_once() override {
        Result r(check(PQexec(conn_, ("DELETE FROM " + table_ + " WHERE expires <= now()").c_str()),
                       "DELETE"));
        return std::stoll(PQcmdTuples(r.get()));
    }

    void drop_table() override {
        for (const std::string& t : lock_table_family(table_name_))
            exec("DROP TABLE IF EXISTS \"" + t + "\"");
        exec("DROP TABLE IF EXISTS \"" + table_name_ + "_data\"");
        exec("DROP FUNCTION IF EXISTS \"" + table_name_ + "_guard\"(bigint, text, text, text)");
    }

    void write_transaction(const std::string& guard) override {
        const std::string data = "\"" + table_name_ + "_data\"";
        if (!data_made_) {
            exec("CREATE TABLE IF NOT EXISTS " + data + " (id bigserial PRIMARY KEY, who text)");
            data_made_ = true;
        }
        exec("BEGIN");
        if (!guard.empty()) exec(guard);
        exec("INSERT INTO " + data + " (who) VALUES ('bench')");
        exec("COMMIT");
    }

    std::int64_t work_done() override {
        // Other backends' counts reach the view when they end or every
        // second; the waiters counted have ended. Our own reads are in it too.
        const char* sql =
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()";
        Result r(check(PQexec(conn_, sql), sql));
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    std::string server_version() override {
        Result r(check(PQexec(conn_, "SELECT version()"), "SELECT version()"));
        std::string v = PQgetvalue(r.get(), 0, 0);
        return v.substr(0, v.find(" on "));
    }

  private:
    // sqlock's own statements, one guarantee added at a time.
    void prepare_layers() {
        layers_ = postgres::layer_statements(target_);
        for (std::size_t i = 0; i < layers_.size(); ++i) {
            const std::string name = "layer_" + std::to_string(i);
            prepare(name.c_str(), layers_[i].acquire);
            if (!layers_[i].release.empty())
                prepare((name + "_release").c_str(), layers_[i].release);
        }
    }

    static std::string trimmed(std::string s) {
        while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
        return s;
    }

    PGresult* check(PGresult* r, const char* what) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
        std::string msg = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
        PQclear(r);
        throw std::runtime_error(std::string("raw PostgreSQL client: ") + what + ": " +
                                 scrub_password(trimmed(msg), url_));
    }

    void exec(const std::string& sql) { Result r(check(PQexec(conn_, sql.c_str()), sql.c_str())); }
    bool data_made_ = false;

    void prepare(const char* name, const std::string& sql) {
        Result r(check(PQprepare(conn_, name, sql.c_str(), 0, nullptr), "PREPARE"));
    }

    PGresult* run(const char* statement, std::initializer_list<const char*> params) {
        return run(statement, params.begin(), static_cast<int>(params.size()));
    }
    PGresult* run(const char* statement, const char* const* params, int count) {
        return check(PQexecPrepared(conn_, statement, count, params, nullptr, nullptr, 0),
                     statement);
    }

    static std::int64_t id_of(PGresult* raw) {
        Result r(raw);
        if (PQntuples(r.get()) == 0) return 0;
        return std::stoll(PQgetvalue(r.get(), 0, 0));
    }

    std::string url_;         // holds the password: never printed
    std::string table_name_;  // the plain name
    std::string table_;       // quoted
    std::string owner_;
    pg::PgTarget target_;  // the table as sqlock's statements name it
    std::vector<postgres::LayerStatements> layers_;
    PGconn* conn_ = nullptr;
};

std::unique_ptr<RawClient> connect(const std::string& url, const std::string& table) {
    return std::make_unique<RawPostgres>(url, table);
}

// The pooled path's costs apart: its statements on the direct connection
// (pooler=transaction: EXECUTE of statements kept on the server session),
// with --pg-session-pooled-url the pooler's hop alone (session mode, the
// direct path's prepared statements), and with --pg-pooled-url both.
std::vector<BenchHooks::Detour> detours(const std::string& url, const OptionValues& options) {
    std::vector<BenchHooks::Detour> out{
        {url + (url.find('?') == std::string::npos ? "?" : "&") + "pooler=transaction",
         "acquire+release, 1 client, pooled path's statements",
         "the direct connection with pooler=transaction (statements kept on the server session, "
         "as through a transaction pooler) vs prepared statements",
         ""}};
    if (!options["pg-session-pooled-url"].empty())
        out.push_back({options["pg-session-pooled-url"],
                       "acquire+release, 1 client, PgBouncer's hop alone",
                       "through PgBouncer in session mode (prepared statements, as direct) vs the "
                       "direct connection: what the pooler's hop costs by itself",
                       ""});
    if (!options["pg-pooled-url"].empty())
        out.push_back({options["pg-pooled-url"], "acquire+release, 1 client, via PgBouncer",
                       "through PgBouncer in transaction mode (the pooled path's statements and "
                       "the pooler's hop) vs the direct connection",
                       "via PgBouncer"});
    return out;
}

}  // namespace

BenchHooks postgres_bench_hooks() {
    BenchHooks hooks;
    hooks.connect = connect;
    hooks.raw_statements = "INSERT ... RETURNING id + DELETE";
    hooks.layers = postgres::layer_names();
    hooks.layer_operation = "acquire+release, 1 client, ";
    hooks.layers_in_parallel = true;
    // Slots at 0.8x of the one raw statement or better: the advisory lock
    // and the take-over of an expired slot are sqlock's own work, which the
    // raw statement does not do.
    hooks.semaphore_goal = 0.8;
    hooks.contention_p50_goal_ms = 2.0;
    // LISTEN/NOTIFY.
    hooks.pushes_wake_ups = true;
    hooks.work_unit = "transactions";
    hooks.detours = detours;
    return hooks;
}

}  // namespace sqlock_bench
