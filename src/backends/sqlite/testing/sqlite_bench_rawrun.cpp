// sqlock-bench-rawrun DB NAME CMD [ARGS...]: the least a program can do to
// run CMD under a lock row in a SQLite file with the sqlite3 C API, the
// baseline of `sqlock run NAME -- CMD` on the same file and table: open with
// sqlock's connection settings, INSERT the row (exit 1 if the name is
// taken), fork and exec CMD, wait, DELETE the row. No lease renewal, no
// signal forwarding, no checks: what is left between this and `sqlock run`
// is sqlock's own work. Plain POSIX and sqlite3, no C++ library (like
// sqlock-bench-probe), so its start-up is only that of its work.
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace {

sqlite3* db = nullptr;

int fail(const char* what) {
    std::fprintf(stderr, "sqlock-bench-rawrun: %s: %s\n", what, db ? sqlite3_errmsg(db) : "");
    return 70;
}

bool exec(const char* sql) {
    return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

// One statement with the name bound; the number of rows it changed, or -1.
int change(const char* sql, const char* name) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? sqlite3_changes(db) : -1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fputs("usage: sqlock-bench-rawrun DB NAME CMD [ARGS...]\n", stderr);
        return 64;
    }
    const char* name = argv[2];
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK)
        return fail("open");
    // sqlock's settings (src/backends/sqlite/sqlite_backend.cpp).
    sqlite3_busy_timeout(db, 10000);
    sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
    if (!exec("PRAGMA journal_mode=WAL") || !exec("PRAGMA synchronous=NORMAL"))
        return fail("settings");
    const int inserted = change(
        "INSERT INTO sqlock_locks (lockstring, created, expires, locked_by) VALUES (?1,"
        " strftime('%Y-%m-%d %H:%M:%f','now'), strftime('%Y-%m-%d %H:%M:%f','now','+60 seconds'),"
        " 'sqlock-bench-rawrun') ON CONFLICT (lockstring) DO NOTHING",
        name);
    if (inserted < 0) return fail("INSERT");
    if (inserted == 0) return 1;  // held
    const pid_t pid = fork();
    if (pid < 0) return fail("fork");
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (change("DELETE FROM sqlock_locks WHERE lockstring = ?1", name) != 1) return fail("DELETE");
    sqlite3_close(db);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
