// `sqlock run` with hosts on every node of a Galera cluster, while nodes
// fail: six hosts, two per node, each with a host list that starts at its
// own node, loop `sqlock run soak --wait ... -- JOB`, where JOB is a guarded
// read-modify-write of a counter in the same database through the `mariadb`
// client (it reads the counter, works a little, writes it plus one under
// SQLOCK_GUARD, and logs what it read with its fencing id). Meanwhile node
// 1 is paused (SIGSTOP) past the lease, node 2 killed and started again,
// node 3 cut from the other two (gmcast.isolate) and joined back. Then:
//
//   - no lost update: the counter equals the log's rows, and the values the
//     jobs read are 0, 1, 2, ... each once;
//   - fencing ids in commit order: in the order of the values read, each
//     job's fencing id is at least the one before (a job that retried on
//     another node after an answer it lost may log twice under one id);
//   - no overlap: in the run history, each run ends before the next starts;
//   - every run runs: its wait is longer than a node's loss, so each
//     `sqlock run` exits 0 (the exit codes are counted, and printed when
//     one is not), a release whose commit its node could not confirm
//     (1180, the node left the primary component mid-commit) included: sent
//     again on another node, it finds its row gone while its lease runs,
//     which on Galera is its own delete (src/held/held_claim.cpp).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "galera_cluster.hpp"
#include "process.hpp"
#include "server_url.hpp"
#include "test_support.hpp"

using namespace std::chrono_literals;
using sqlock_galera::Cluster;
using sqlock_galera::query_value;
using steady = std::chrono::steady_clock;

namespace {

// The job: the guarded read-modify-write, on the host's nodes in its
// order, as a job that must get its write through does it: a node that does
// not answer within 3 s, or refuses (not in the primary component, the
// transaction aborted), is given up for the next, round after round for a
// minute (what a given-up node was sent either commits before the cluster
// moves on, or is refused by certification; a job that tries again after
// its commit's answer was lost writes twice, under one fencing id). A node
// joining back can leave the cluster without a primary component for a
// few seconds. Exit 3 when no node took it.
const char* const job = R"(
while [ "$SECONDS" -lt 60 ]; do
  for port in $APP_PORTS; do
    if timeout -k 1 3 mariadb --host=127.0.0.1 --port="$port" --user="$APP_USER" \
         --connect-timeout=2 "$APP_DATABASE" -e "
           START TRANSACTION;
           $SQLOCK_GUARD;
           SELECT value INTO @v FROM ${APP_TABLE}_counter WHERE id = 1;
           DO SLEEP(0.02);
           UPDATE ${APP_TABLE}_counter SET value = @v + 1 WHERE id = 1;
           INSERT INTO ${APP_TABLE}_log (value_read, fencing_id, host) VALUES (@v, $SQLOCK_ID, $APP_HOST);
           COMMIT;" 2>>"$APP_ERRORS"; then
      exit 0
    fi
  done
  sleep 0.5
done
exit 3
)";

// One row per line, columns by tabs, of `sql` on a causal read of node 1.
std::vector<std::vector<std::string>> rows_of(const Cluster& c, const std::string& sql) {
    MYSQL* db = sqlock_galera::connect(c, 1);
    const std::string causal = "SET STATEMENT wsrep_sync_wait = 1 FOR " + sql;
    if (mysql_real_query(db, causal.data(), causal.size()) != 0) {
        const std::string why = mysql_error(db);
        mysql_close(db);
        throw std::runtime_error(why);
    }
    std::vector<std::vector<std::string>> out;
    if (MYSQL_RES* res = mysql_store_result(db)) {
        const unsigned n = mysql_num_fields(res);
        while (MYSQL_ROW row = mysql_fetch_row(res)) {
            std::vector<std::string> r;
            for (unsigned i = 0; i < n; ++i) r.emplace_back(row[i] ? row[i] : "");
            out.push_back(std::move(r));
        }
        mysql_free_result(res);
    }
    mysql_close(db);
    return out;
}

// Sets `flag` when it goes out of scope, however the scope is left.
struct StopOnExit {
    std::atomic<bool>& flag;
    ~StopOnExit() { flag = true; }
};

struct Fault {
    std::string what;
    steady::time_point from, to;
};

}  // namespace

TEST_CASE(
    "sqlock run with hosts on every node: one at a time, no lost update, ids in order, "
    "every run runs while nodes are paused, killed and cut off",
    "[galera][soak]") {
    const Cluster c;
    const sqlock_galera::Restored restored(c);
    const auto started = steady::now();
    const std::string table = "soak_" + std::to_string(getpid());
    // The lease outlasts what a fault stalls the cluster for, with room to
    // renew before sqlock would stop the job (the lease less its kill
    // grace and margin): the 2 s of galera.sh's evs.suspect_timeout and the
    // view change for a node that stops, and up to 4 s for one that joins
    // back (measured: its first membership round can run out of time, the
    // others form components of one, then of two again). The wait outlasts
    // the longest fault; the node paused stays paused past the lease.
    const std::string lease = "12s", wait = "40s", grace = "2s";
    const auto pause = 14s;
    sqlock::Locker(c.node_url(1), sqlock_test::locker_options().table(table)).init();
    {
        MYSQL* db = sqlock_galera::connect(c, 1);
        query_value(db, "CREATE TABLE " + table + "_counter (id INT PRIMARY KEY, value BIGINT)");
        query_value(db, "INSERT INTO " + table + "_counter VALUES (1, 0)");
        query_value(db, "CREATE TABLE " + table +
                            "_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, value_read BIGINT,"
                            " fencing_id BIGINT, host INT)");
        mysql_close(db);
    }
    const std::string errors = sqlock_test::scratch_dir() + "/soak_job_errors";
    const std::string user = sqlock_test::ServerUrl(c.node_url(1)).user;

    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::map<int, int> exits;             // `sqlock run`'s exit code: how many
    std::vector<std::string> complaints;  // the stderr of a run that did not exit 0
    auto host = [&](int h) {
        const int first = h % 3 + 1;
        std::string ports;
        for (int k = 0; k < 3; ++k) ports += std::to_string(c.port((first - 1 + k) % 3 + 1)) + " ";
        const sqlock_test::Env env = {{"SQLOCK_DB", c.url_from(first)},
                                      {"MYSQL_PWD", c.password()},
                                      {"APP_PORTS", ports},
                                      {"APP_USER", user},
                                      {"APP_DATABASE", "sqlock_test"},
                                      {"APP_TABLE", table},
                                      {"APP_HOST", std::to_string(h)},
                                      {"APP_ERRORS", errors}};
        while (!stop) {
            sqlock_test::Process run(
                {SQLOCK_CLI, "-v", "--table", table, "run", "soak", "--expires", lease,
                 "--kill-grace", grace, "--wait", wait, "--", "/bin/bash", "-c", job},
                env);
            const sqlock_test::Outcome o = run.finish(120s);
            std::lock_guard<std::mutex> guard(mutex);
            ++exits[o.code];
            if (o.code != 0 && complaints.size() < 20)
                complaints.push_back("host " + std::to_string(h) + " exit " +
                                     std::to_string(o.code) + ": " + o.err);
        }
    };
    // Should a fault throw, the hosts are told to stop and joined (their
    // runs are bounded) before the cluster is restored: a joinable thread
    // destroyed would end the whole binary, the cluster left broken.
    std::vector<sqlock_test::ScopedThread> hosts;
    const StopOnExit stop_hosts{stop};  // after `hosts`: it runs before their joins
    hosts.reserve(6);
    for (int h = 0; h < 6; ++h) hosts.emplace_back([&host, h] { host(h); });

    // The faults, one node at a time, each ended with its node Synced.
    std::vector<Fault> faults;
    auto fault = [&](const std::string& what, auto&& begin, std::chrono::milliseconds length,
                     auto&& end) {
        Fault f{what, steady::now(), {}};
        begin();
        std::this_thread::sleep_for(length);
        end();
        f.to = steady::now();
        faults.push_back(f);
    };
    std::this_thread::sleep_for(6s);
    fault(
        "node 1 paused 14 s (past the lease)", [&] { c.pause(1); }, pause,
        [&] {
            c.resume(1);
            c.isolate(1, false);  // waits until it is Synced again
        });
    std::this_thread::sleep_for(4s);
    fault(
        "node 2 killed, started again after 3 s", [&] { c.kill(2); }, 3s, [&] { c.revive(2); });
    std::this_thread::sleep_for(4s);
    fault(
        "node 3 cut from the others for 8 s", [&] { c.isolate(3, true); }, 8s,
        [&] { c.isolate(3, false); });
    std::this_thread::sleep_for(6s);
    stop = true;
    for (sqlock_test::ScopedThread& t : hosts) t.join();

    // What the jobs wrote, in commit order (each read the last one's value).
    const auto log = rows_of(
        c, "SELECT value_read, fencing_id, host FROM " + table + "_log ORDER BY value_read, id");
    const auto counter = rows_of(c, "SELECT value FROM " + table + "_counter WHERE id = 1");
    const auto history =
        rows_of(c,
                "SELECT fencing_id, DATE_FORMAT(started, '%Y-%m-%d %H:%i:%s.%f'),"
                " DATE_FORMAT(COALESCE(ended, started), '%Y-%m-%d %H:%i:%s.%f'), outcome FROM " +
                    table + "_runs ORDER BY started, id");
    std::string counts;
    int runs = 0;
    for (const auto& [code, n] : exits) {
        counts += " exit " + std::to_string(code) + ": " + std::to_string(n) + ";";
        runs += n;
    }
    std::string faults_text;
    for (const Fault& f : faults)
        faults_text +=
            f.what + " (" +
            std::to_string(
                std::chrono::duration_cast<std::chrono::milliseconds>(f.to - f.from).count()) +
            " ms); ";
    std::string complained;
    for (const std::string& complaint : complaints) complained += complaint + "\n";
    INFO("runs:" << counts << " faults: " << faults_text);
    INFO("runs that did not exit 0:\n" << complained);
    INFO("job errors: " << sqlock_test::read_file(errors).substr(0, 2000));

    REQUIRE(counter.size() == 1);
    CHECK(counter[0][0] == std::to_string(log.size()));
    std::size_t lost_updates = 0, order_violations = 0;
    for (std::size_t i = 0; i < log.size(); ++i) {
        if (log[i][0] != std::to_string(i)) ++lost_updates;
        if (i > 0 && std::stoll(log[i][1]) < std::stoll(log[i - 1][1])) ++order_violations;
    }
    CHECK(lost_updates == 0);
    CHECK(order_violations == 0);
    // A run's start record sent again after its answer was lost (the
    // node stopped) can be there twice, under one fencing id: the same run.
    std::size_t overlaps = 0, id_order = 0, recorded_twice = 0;
    for (std::size_t i = 1; i < history.size(); ++i) {
        if (history[i][0] == history[i - 1][0]) {
            ++recorded_twice;
            continue;
        }
        if (history[i][1] < history[i - 1][2]) ++overlaps;
        if (std::stoll(history[i][0]) < std::stoll(history[i - 1][0])) ++id_order;
    }
    CHECK(overlaps == 0);
    CHECK(id_order == 0);
    CHECK(exits.size() == 1);
    CHECK(exits.count(0) == 1);
    CHECK(log.size() > 100);
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(steady::now() - started).count();
    WARN("galera soak: " << runs << " runs," << counts << " " << log.size()
                         << " guarded writes, 0 lost, in " << seconds << " s; " << faults_text
                         << recorded_twice << " run start(s) recorded twice");
}
