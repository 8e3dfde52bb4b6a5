// The Galera suites' cluster, as the tests drive it: the three nodes that
// tests/mariadb/galera_cluster.sh started through galera.sh
// ($SQLOCK_TEST_GALERA_SCRIPT) in $SQLOCK_TEST_GALERA_DIR, their URLs, and
// the faults the suites put them through. Every fault ends with its node
// back and Synced (restore_all() at a test's end: a failed test must not
// leave the next one a broken cluster).
#pragma once

#include <mysql.h>

#include <string>
#include <vector>

namespace sqlock_galera {

class Cluster {
  public:
    /// The cluster of $SQLOCK_TEST_GALERA_DIR; throws std::runtime_error
    /// when there is none.
    Cluster();

    /// The host list of every node, node `first` (1..3) first, then the
    /// others in order after it.
    std::string url_from(int first) const;
    /// Node `n` alone.
    std::string node_url(int n) const;
    /// Its client port.
    int port(int n) const;
    std::string password() const;
    /// Node `n`'s private socket (root's way in).
    std::string socket(int n) const;

    /// SIGSTOP / SIGCONT to node `n`'s server.
    void pause(int n) const;
    void resume(int n) const;
    /// SIGKILL; revive() starts it again and waits until it is Synced.
    void kill(int n) const;
    void revive(int n) const;
    /// Cuts node `n` from the other two (Galera's gmcast.isolate), or joins
    /// it back and waits until it is Synced.
    void isolate(int n, bool on) const;
    /// "Synced Primary 3" (the node's state, its component's and that
    /// component's size), "Initialized non-Primary 1", ..., or "down".
    std::string state(int n) const;
    /// Every node running, resumed and Synced.
    void restore_all() const;

  private:
    std::string run(const std::string& args) const;

    std::string script_, dir_;
};

/// Restores the cluster (Cluster::restore_all()) when it goes out of
/// scope, whatever the test did to it: one that failed half-way must not
/// leave the next a broken cluster.
class Restored {
  public:
    explicit Restored(const Cluster& cluster) : cluster_(cluster) {}
    ~Restored();
    Restored(const Restored&) = delete;
    Restored& operator=(const Restored&) = delete;

  private:
    const Cluster& cluster_;
};

/// A session of the application's own on node `n` (its transactions, as
/// a program that guards its writes has them): the MariaDB C API, autocommit
/// on, the server's own isolation level. Throws std::runtime_error.
MYSQL* connect(const Cluster& cluster, int n);
/// A root session on node `n`, over its private socket (galera.sh lets
/// the user running the tests in as root): for what the test account may
/// not do, such as changing the node's appliers.
MYSQL* connect_root(const Cluster& cluster, int n);
/// Runs `sql` on `db`; the first column of its first row ("" if none).
/// Throws std::runtime_error naming the error ("1213: Deadlock ...").
std::string query_value(MYSQL* db, const std::string& sql);
/// Runs `sql`, returning the error number (0: it succeeded).
unsigned try_query(MYSQL* db, const std::string& sql);

}  // namespace sqlock_galera
