#include "test_support.hpp"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <thread>

namespace sqlock_test {

const std::string& backend() {
    static const std::string value = [] {
        const char* b = std::getenv("SQLOCK_TEST_BACKEND");
        return std::string(b && *b ? b : "sqlite");
    }();
    return value;
}

const std::string& scratch_dir() {
    // Deliberately leaked: the atexit cleanup below is registered while this
    // static is being initialised, so it would run after a normal static's
    // destructor and read freed memory.
    static const std::string& dir = *new std::string([] {
        std::string base = std::filesystem::temp_directory_path().string() + "/sqlock-test-XXXXXX";
        if (!mkdtemp(base.data())) throw std::runtime_error("mkdtemp failed");
        static pid_t owner = getpid();
        std::atexit([] {
            if (getpid() == owner) {
                std::error_code ec;
                std::filesystem::remove_all(scratch_dir(), ec);
            }
        });
        return base;
    }());
    return dir;
}

static std::string pg_url() {
    const char* url = std::getenv("SQLOCK_TEST_PG_URL");
    if (!url || !*url) throw std::runtime_error("SQLOCK_TEST_PG_URL is not set");
    return url;
}

Database fresh_database() {
    static std::atomic<int> counter{0};
    int n = ++counter;
    Database db;
    if (backend() == "postgres") {
        db.url = pg_url();
        // Random too: later runs on the same server (the sanitizer stage)
        // may reuse a pid, and tables are never dropped.
        static const std::string run = [] {
            char buf[9];
            std::snprintf(buf, sizeof buf, "%08x", std::random_device{}());
            return std::string(buf);
        }();
        db.table = "t_" + std::to_string(getpid()) + "_" + run + "_" + std::to_string(n);
    } else {
        db.url = "sqlite://" + scratch_dir() + "/db" + std::to_string(n) + ".db";
        db.table = "sqlock_locks";
    }
    db.open().init();
    return db;
}

sqlock::Locker Database::open(sqlock::LockerOptions options) const {
    options.table = table;
    return sqlock::Locker(url, options);
}

std::vector<int> run_children(int n, const std::function<int(int)>& body) {
    std::vector<pid_t> pids;
    for (int i = 0; i < n; ++i) {
        pid_t pid = fork();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) {
            int code = 99;
            try {
                code = body(i);
            } catch (const std::exception& e) {
                fprintf(stderr, "child %d: %s\n", i, e.what());
                code = 98;
            }
            fflush(nullptr);
            _exit(code);
        }
        pids.push_back(pid);
    }
    std::vector<int> codes;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    return codes;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (condition()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return condition();
}

std::vector<long long> read_ids(const std::string& path) {
    std::vector<long long> ids;
    if (FILE* f = fopen(path.c_str(), "r")) {
        long long id = 0;
        while (fscanf(f, "%lld", &id) == 1) ids.push_back(id);
        fclose(f);
    }
    return ids;
}

// The URL as libpq takes it: without sqlock's own `pooler` parameter.
static std::string libpq_url(std::string url) {
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

void exec_sql(const Database& db, const std::string& sql) {
    if (backend() == "postgres") {
        PGconn* conn = PQconnectdb(libpq_url(db.url).c_str());
        if (PQstatus(conn) != CONNECTION_OK) {
            std::string msg = PQerrorMessage(conn);
            PQfinish(conn);
            throw std::runtime_error("exec_sql connect: " + msg);
        }
        PGresult* r = PQexec(conn, sql.c_str());
        auto status = PQresultStatus(r);
        std::string msg = PQresultErrorMessage(r);
        PQclear(r);
        PQfinish(conn);
        if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
            throw std::runtime_error("exec_sql: " + msg);
    } else {
        std::string path = db.url.substr(std::string("sqlite://").size());
        sqlite3* h = nullptr;
        sqlite3_open(path.c_str(), &h);
        sqlite3_busy_timeout(h, 10000);
        char* err = nullptr;
        int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
        std::string msg = err ? err : "";
        sqlite3_free(err);
        sqlite3_close(h);
        if (rc != SQLITE_OK) throw std::runtime_error("exec_sql: " + msg);
    }
}

}  // namespace sqlock_test
