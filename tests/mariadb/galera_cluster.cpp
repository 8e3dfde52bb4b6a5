#include "galera_cluster.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "server_url.hpp"

namespace sqlock_galera {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

std::string node_command(const std::string& script, const std::string& dir, const std::string& what,
                         int n, const std::string& extra = "") {
    return "'" + script + "' " + what + " '" + dir + "' " + std::to_string(n) +
           (extra.empty() ? "" : " " + extra);
}

// Runs `command` through the shell (galera.sh bounds its own waits);
// its output without the last newline. Throws std::runtime_error when it
// fails, with what it said.
std::string run_command(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (!p) throw std::runtime_error("popen failed");
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    const int status = pclose(p);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    if (status != 0) throw std::runtime_error(command + " failed: " + out);
    return out;
}

}  // namespace

Cluster::Cluster()
    : script_(env("SQLOCK_TEST_GALERA_SCRIPT")), dir_(env("SQLOCK_TEST_GALERA_DIR")) {
    if (script_.empty() || dir_.empty())
        throw std::runtime_error(
            "SQLOCK_TEST_GALERA_SCRIPT and SQLOCK_TEST_GALERA_DIR are not set");
}

std::string Cluster::run(const std::string& args) const {
    return run_command("'" + script_ + "' " + args + " '" + dir_ + "'");
}

std::string Cluster::socket(int n) const {
    return dir_ + "/node" + std::to_string(n) + "/run/mysqld.sock";
}

std::string Cluster::url_from(int first) const {
    const std::string all = run("url");  // ...@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/db
    std::string hosts;
    for (int k = 0; k < 3; ++k) {
        const int n = (first - 1 + k) % 3 + 1;
        hosts += (k ? "," : "") + std::string("127.0.0.1:") + std::to_string(port(n));
    }
    const std::size_t at = all.rfind('@'), slash = all.find('/', at);
    return all.substr(0, at + 1) + hosts + all.substr(slash);
}

std::string Cluster::node_url(int n) const {
    // galera.sh takes the node after the directory: "url DIR N".
    return run_command(node_command(script_, dir_, "url", n));
}

int Cluster::port(int n) const {
    return sqlock_test::port_of(node_url(n));
}

std::string Cluster::password() const {
    return sqlock_test::password_of(node_url(1));
}

void Cluster::pause(int n) const {
    const pid_t pid = std::stoi(run_command(node_command(script_, dir_, "pid", n)));
    ::kill(pid, SIGSTOP);
}

void Cluster::resume(int n) const {
    const pid_t pid = std::stoi(run_command(node_command(script_, dir_, "pid", n)));
    ::kill(pid, SIGCONT);
}

void Cluster::kill(int n) const {
    run_command(node_command(script_, dir_, "kill", n));
}

void Cluster::revive(int n) const {
    run_command(node_command(script_, dir_, "revive", n));
}

void Cluster::isolate(int n, bool on) const {
    run_command(node_command(script_, dir_, "isolate", n, on ? "on" : "off"));
}

std::string Cluster::state(int n) const {
    return run_command(node_command(script_, dir_, "state", n));
}

void Cluster::restore_all() const {
    for (int n = 1; n <= 3; ++n) {
        try {
            resume(n);
        } catch (const std::runtime_error&) {
            // Not running: revived below.
        }
        if (state(n) == "down") revive(n);
    }
    // Joined back (a no-op for a node that was not cut off), and Synced in
    // a component of all three (isolate() waits for that).
    for (int n = 1; n <= 3; ++n) isolate(n, false);
}

Restored::~Restored() {
    try {
        cluster_.restore_all();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "could not restore the Galera cluster: %s\n", e.what());
    }
}

MYSQL* connect(const Cluster& cluster, int n) {
    sqlock_test::ServerUrl u(cluster.node_url(n));
    MYSQL* db = mysql_init(nullptr);
    if (!db) throw std::runtime_error("mysql_init failed");
    const unsigned timeout = 10;
    mysql_options(db, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(db, MYSQL_OPT_READ_TIMEOUT, &timeout);
    mysql_options(db, MYSQL_OPT_WRITE_TIMEOUT, &timeout);
    const std::string database = u.path.substr(1, u.path.find('?') - 1);
    if (!mysql_real_connect(db, u.host.c_str(), u.user.c_str(), cluster.password().c_str(),
                            database.c_str(), static_cast<unsigned>(std::stoi(u.port)), nullptr,
                            0)) {
        const std::string why = mysql_error(db);
        mysql_close(db);
        throw std::runtime_error("cannot connect to node " + std::to_string(n) + ": " + why);
    }
    return db;
}

MYSQL* connect_root(const Cluster& cluster, int n) {
    MYSQL* db = mysql_init(nullptr);
    if (!db) throw std::runtime_error("mysql_init failed");
    if (!mysql_real_connect(db, "localhost", "root", nullptr, nullptr, 0, cluster.socket(n).c_str(),
                            0)) {
        const std::string why = mysql_error(db);
        mysql_close(db);
        throw std::runtime_error("cannot connect to node " + std::to_string(n) +
                                 " as root: " + why);
    }
    return db;
}

std::string query_value(MYSQL* db, const std::string& sql) {
    if (mysql_real_query(db, sql.data(), sql.size()) != 0)
        throw std::runtime_error(std::to_string(mysql_errno(db)) + ": " + mysql_error(db));
    std::string value;
    if (MYSQL_RES* res = mysql_store_result(db)) {
        if (MYSQL_ROW row = mysql_fetch_row(res))
            if (mysql_num_fields(res) > 0 && row[0]) value = row[0];
        mysql_free_result(res);
    }
    return value;
}

unsigned try_query(MYSQL* db, const std::string& sql) {
    if (mysql_real_query(db, sql.data(), sql.size()) != 0) return mysql_errno(db);
    if (MYSQL_RES* res = mysql_store_result(db)) mysql_free_result(res);
    return 0;
}

}  // namespace sqlock_galera
