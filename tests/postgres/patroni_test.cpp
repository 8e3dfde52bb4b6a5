// Under Patroni: a real 3-node cluster of Debian's patroni and etcd-server
// (src/backends/postgres/testing/patroni.sh), reached through the multi-host
// URL with target_session_attrs=read-write, as operators run sqlock on it.
//
// Synchronous mode: four hosts (processes) loop `sqlock run sw --expires 6s
// --wait 20s -- JOB`, the job writing its start, end (or SIGTERM) and
// SQLOCK_ID, and a fifth loops a run without --wait on a name of its own,
// while Patroni does a switchover (`patronictl switchover`), a failover (the
// leader's postmaster SIGKILLed), a paused leader (its Patroni and
// PostgreSQL SIGSTOPped past the TTL, then resumed), a standby frozen that a
// holder's URL lists first, and a frozen synchronous standby. Checked on the
// jobs' own records and on `sqlock history --json`: no two jobs overlap,
// fencing ids rise in start order, every run's job runs (no exit but 0 and
// 79: each outage is shorter than the runs' wait) and every job is in the
// history; a `sqlock run --expires 20s` whose job outlasts the switchover and
// the failover is never signalled, nor is a 6 s lease whose URL lists the
// frozen standby first; the doctor names the primary of the host list.
// Prints how long the name stood free at each event, and what the run
// without a wait met.
//
// Asynchronous mode: what a crash failover loses when the standbys had not
// received the last commits (the primary's WAL senders frozen, then the
// primary killed): a held lock's row, a `--once-per` window's run, and the
// fencing ids handed out since; and what the holder and `sqlock doctor` say.
//
// $SQLOCK_TEST_PATRONI_DCS=etcd3 runs it with Patroni's etcd3 client (see
// patroni.sh). The cluster is the test's own (started and stopped here);
// each case prints its whole time.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "test_support.hpp"

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using sqlock_test::Outcome;
using sqlock_test::Process;
using sqlock_test::spawn_options;

namespace {

const std::string patroni_script = SQLOCK_PATRONI_SCRIPT;

// Seconds since the epoch, the clock the jobs' `date +%s.%N` reads.
double wall_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

double seconds_since(steady::time_point t) {
    return std::chrono::duration<double>(steady::now() - t).count();
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

// patroni.sh with `args`; its stdout. Throws with its stderr when it fails.
std::string patroni(const std::vector<std::string>& args,
                    std::chrono::milliseconds limit = std::chrono::seconds(90)) {
    std::vector<std::string> argv = {"/bin/bash", patroni_script};
    argv.insert(argv.end(), args.begin(), args.end());
    const Outcome o = sqlock_test::run(argv, {}, {}, limit);
    if (o.code != 0)
        throw std::runtime_error("patroni.sh " + args.at(0) + " failed (exit " +
                                 std::to_string(o.code) + "): " + o.err);
    return trimmed(o.out);
}

// One cluster in a directory of its own, stopped and removed whatever happens.
class Cluster {
  public:
    explicit Cluster(const std::vector<std::string>& options) {
        char d[] = "/tmp/sqlock-patroni-XXXXXX";
        if (!mkdtemp(d)) throw std::runtime_error("mkdtemp failed");
        dir_ = d;
        const auto t = steady::now();
        std::vector<std::string> args = {"start", dir_};
        args.insert(args.end(), options.begin(), options.end());
        std::string out;
        try {
            out = patroni(args);
        } catch (...) {
            stop();
            throw;
        }
        started_in_ = seconds_since(t);
        std::istringstream lines(out);
        for (std::string line; std::getline(lines, line);) {
            const std::size_t eq = line.find('=');
            if (eq == std::string::npos) continue;
            if (line.compare(0, eq, "SQLOCK_TEST_PATRONI_URL") == 0) url_ = line.substr(eq + 1);
            if (line.compare(0, eq, "SQLOCK_TEST_PATRONI_LEADER") == 0)
                leader_ = line.substr(eq + 1);
        }
        if (url_.empty() || leader_.empty()) {
            stop();
            throw std::runtime_error("patroni.sh start printed no URL or leader");
        }
    }
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;
    ~Cluster() { stop(); }

    void stop() noexcept {
        // Best effort: a failure here must not hide the test's own.
        try {
            sqlock_test::run({"/bin/bash", patroni_script, "stop", dir_}, {}, {}, 60s);
        } catch (...) {
        }
    }
    const std::string& url() const { return url_; }
    const std::string& first_leader() const { return leader_; }
    double started_in() const { return started_in_; }

    std::string leader() const { return patroni({"leader", dir_}); }
    // Until it is as it started: a leader, both replicas streaming (one of
    // them the synchronous standby in synchronous mode); the leader.
    std::string await_healthy() const {
        return patroni({"await-healthy", dir_, "--timeout", "90"}, 100s);
    }
    // The new leader, once it runs and accepts writes.
    std::string await_leader_other_than(const std::string& old) const {
        return patroni({"await-leader", dir_, "--not", old, "--timeout", "60"}, 70s);
    }
    // Each member's name, role (leader, sync_standby, replica) and state.
    std::vector<std::vector<std::string>> members() const {
        std::vector<std::vector<std::string>> out;
        std::istringstream lines(patroni({"members", dir_}));
        for (std::string line; std::getline(lines, line);) {
            std::istringstream f(line);
            std::vector<std::string> fields(3);
            if (f >> fields[0] >> fields[1] >> fields[2]) out.push_back(fields);
        }
        return out;
    }
    // A running member in `role`, other than `other` ("" if none now).
    std::string running_in_role(const std::string& role, const std::string& other = "") const {
        for (const auto& m : members())
            if (m[1] == role && m[2] == "running" && m[0] != other) return m[0];
        return "";
    }
    int port(const std::string& node) const { return std::stoi(patroni({"port", dir_, node})); }
    std::string run(const std::vector<std::string>& args) const {
        std::vector<std::string> all = {args.at(0), dir_};
        all.insert(all.end(), args.begin() + 1, args.end());
        return patroni(all);
    }

  private:
    std::string dir_, url_, leader_;
    double started_in_ = 0;
};

// What the jobs wrote: "S|E|T TIME SQLOCK_ID SQLOCK_PID" lines (start, end,
// SIGTERM), one file for every job of a name.
struct Job {
    long long id = 0;
    long pid = 0;  // the `sqlock run` that ran it
    double start = 0, end = 0;
    bool ended = false, terminated = false;
};

std::vector<Job> read_jobs(const std::string& path) {
    std::map<long long, Job> by_id;
    std::istringstream in(sqlock_test::read_file(path));
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        char kind = 0;
        double t = 0;
        long long id = 0;
        long pid = 0;
        if (!(f >> kind >> t >> id >> pid)) continue;
        Job& j = by_id[id];
        j.id = id;
        j.pid = pid;
        if (kind == 'S') j.start = t;
        if (kind == 'E' || kind == 'T') {
            j.end = t;
            j.ended = true;
            j.terminated = kind == 'T';
        }
    }
    std::vector<Job> jobs;
    for (auto& [id, job] : by_id)
        if (job.start > 0) jobs.push_back(job);
    std::sort(jobs.begin(), jobs.end(),
              [](const Job& a, const Job& b) { return a.start < b.start; });
    return jobs;
}

// What the host loops wrote after each run: "CODE START END PID".
struct Run {
    int code = 0;
    double start = 0, end = 0;
    long pid = 0;
};

std::vector<Run> read_runs(const std::string& path) {
    std::vector<Run> runs;
    std::istringstream in(sqlock_test::read_file(path));
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        Run r;
        if (f >> r.code >> r.start >> r.end >> r.pid) runs.push_back(r);
    }
    return runs;
}

// The longest the name stood free between `from` and `to`: from the end of
// the job that ran when `from` came (or `from` itself) to the next job's
// start, for each job that started within (from, to].
double longest_gap(const std::vector<Job>& jobs, double from, double to) {
    double longest = 0, free_since = from;
    for (const Job& j : jobs) {
        if (j.start > to) break;
        if (j.start > from) longest = std::max(longest, j.start - free_since);
        free_since = std::max(free_since, j.end);
    }
    return longest;
}

int jobs_started_after(const std::vector<Job>& jobs, double t) {
    return static_cast<int>(
        std::count_if(jobs.begin(), jobs.end(), [&](const Job& j) { return j.start > t; }));
}

void make_dir(const std::string& path) {
    if (system(("mkdir -p '" + path + "'").c_str()) != 0)
        throw std::runtime_error("mkdir " + path + " failed");
}

// A job for `/bin/bash -c JOB job RECORDS ...` that writes to RECORDS ($1)
// its start, then runs `body`, then writes its end, or its SIGTERM if one
// comes (read_jobs()). Its lines use builtins only ($EPOCHREALTIME, echo):
// a SIGTERM trap that starts a process (`$(date)`) under dash sometimes
// loses that process to the same SIGTERM, and its line with it.
std::string recording_job(const std::string& body) {
    return "trap 'echo \"T $EPOCHREALTIME $SQLOCK_ID $PPID\" >> \"$1\"; exit 143' TERM; "
           "echo \"S $EPOCHREALTIME $SQLOCK_ID $PPID\" >> \"$1\"; " +
           body + "; echo \"E $EPOCHREALTIME $SQLOCK_ID $PPID\" >> \"$1\"";
}

// Hosts looping `sqlock run NAME --expires 6s --wait WAIT -- JOB` (no
// --wait when WAIT is ""), each a shell of its own (a process group: a
// failing test kills what it started).
class Fleet {
  public:
    Fleet(const std::string& url, const std::string& table, const std::string& name, int hosts,
          const std::string& wait = "20s")
        : dir_(sqlock_test::scratch_dir() + "/fleet-" + name) {
        make_dir(dir_);
        records_ = dir_ + "/jobs";
        exits_ = dir_ + "/runs";
        stop_ = dir_ + "/stop";
        const std::string job = recording_job("sleep 0.2");
        // The URL travels in SQLOCK_DB, never on a command line.
        const std::string loop =
            "while [ ! -e \"$STOP\" ]; do "
            "  s=$(date +%s.%N); "
            "  \"$SQLOCK\" --table \"$TABLE\" run \"$NAME\" --expires 6s $WAIT "
            "    -- /bin/bash -c \"$JOB\" job \"$RECORDS\" 2>\"$ERR.last\" & "
            "  pid=$!; wait $pid; rc=$?; "
            "  echo \"$rc $s $(date +%s.%N) $pid\" >> \"$EXITS\"; "
            "  sed \"s/^/$rc $pid: /\" \"$ERR.last\" >> \"$ERR\"; "
            "done";
        for (int i = 0; i < hosts; ++i) {
            const std::string err = dir_ + "/err" + std::to_string(i);
            hosts_.emplace_back(std::vector<std::string>{"/bin/sh", "-c", loop},
                                sqlock_test::Env{{"SQLOCK_DB", url},
                                                 {"SQLOCK", SQLOCK_CLI},
                                                 {"TABLE", table},
                                                 {"NAME", name},
                                                 {"WAIT", wait.empty() ? "" : "--wait " + wait},
                                                 {"JOB", job},
                                                 {"RECORDS", records_},
                                                 {"EXITS", exits_},
                                                 {"ERR", err},
                                                 {"STOP", stop_}},
                                spawn_options().own_group(true));
            errs_.push_back(err);
        }
    }
    ~Fleet() { stop(); }

    // Each host ends after its run in progress (at most its wait and a job).
    void stop() {
        { std::ofstream(stop_.c_str()); }
        const auto deadline = steady::now() + 60s;
        for (Process& h : hosts_) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::max<steady::duration>(deadline - steady::now(), 1s));
            if (h.finish(left).timed_out) ++hung_;
        }
        hosts_.clear();
    }
    // Hosts that had not ended a minute after they were told to stop.
    int hung() const { return hung_; }
    std::vector<Job> jobs() const { return read_jobs(records_); }
    std::vector<Run> runs() const { return read_runs(exits_); }
    // What sqlock printed on stderr, each line prefixed "CODE PID: ".
    std::string errors() const {
        std::string all;
        for (const std::string& e : errs_) all += sqlock_test::read_file(e);
        return all;
    }
    // Until `n` jobs have started after `t` (a condition, not a sleep).
    bool await_jobs_after(double t, int n, std::chrono::seconds limit) const {
        const auto deadline = steady::now() + limit;
        while (steady::now() < deadline) {
            if (jobs_started_after(jobs(), t) >= n) return true;
            std::this_thread::sleep_for(50ms);
        }
        return false;
    }

  private:
    std::string dir_, records_, exits_, stop_;
    std::vector<std::string> errs_;
    std::vector<Process> hosts_;
    int hung_ = 0;
};

// A `sqlock run NAME --expires 20s` whose job runs until told to end, and
// writes "S"/"T"/"E" lines as the fleet's jobs do.
class Holder {
  public:
    Holder(const std::string& url, const std::string& table, const std::string& name,
           const std::string& lease)
        : dir_(sqlock_test::scratch_dir() + "/holder-" + std::to_string(++made_)) {
        make_dir(dir_);
        records_ = dir_ + "/jobs";
        done_ = dir_ + "/done";
        err_ = dir_ + "/err";
        const std::string job = recording_job("while [ ! -e \"$2\" ]; do sleep 0.05; done");
        process_.emplace(
            std::vector<std::string>{SQLOCK_CLI, "--table", table, "run", name, "--expires", lease,
                                     "--", "/bin/bash", "-c", job, "job", records_, done_},
            sqlock_test::Env{{"SQLOCK_DB", url}},
            spawn_options().own_group(true).stderr_path(err_));
    }
    bool await_started() const {
        return sqlock_test::eventually([&] { return !read_jobs(records_).empty(); }, 30s);
    }
    Outcome finish() {
        { std::ofstream(done_.c_str()); }
        return process_->finish(40s);
    }
    // Its exit code once it ends by itself within `limit`.
    std::optional<int> await_exit(std::chrono::milliseconds limit) {
        return process_->wait_for(limit);
    }
    std::vector<Job> jobs() const { return read_jobs(records_); }
    std::string errors() const { return sqlock_test::read_file(err_); }

  private:
    static inline int made_ = 0;
    std::string dir_, records_, done_, err_;
    std::optional<Process> process_;
};

// `url` (a multi-host URL of 127.0.0.1 entries) with the entry of `port`
// listed first.
std::string with_first_port(const std::string& url, int port) {
    const std::size_t at = url.find('@'), slash = url.find('/', at);
    std::vector<std::string> hosts;
    std::istringstream list(url.substr(at + 1, slash - at - 1));
    for (std::string h; std::getline(list, h, ',');) hosts.push_back(h);
    const std::string first = "127.0.0.1:" + std::to_string(port);
    std::string out = first;
    for (const std::string& h : hosts)
        if (h != first) out += "," + h;
    return url.substr(0, at + 1) + out + url.substr(slash);
}

std::string format_seconds(double s) {
    std::ostringstream o;
    o.precision(2);
    o << std::fixed << s << " s";
    return o.str();
}

// The `sqlock` command against the cluster, to its end (bounded).
Outcome cli(const std::string& url, const std::vector<std::string>& args,
            std::chrono::seconds limit = 60s) {
    std::vector<std::string> argv = {SQLOCK_CLI};
    argv.insert(argv.end(), args.begin(), args.end());
    return sqlock_test::run(argv, sqlock_test::Env{{"SQLOCK_DB", url}}, {}, limit);
}

// Patroni's etcd client: $SQLOCK_TEST_PATRONI_DCS, else `etcd` (the v2 API;
// see testing/patroni.sh for why not etcd3 with Debian 12's Patroni).
std::string dcs() {
    const char* v = std::getenv("SQLOCK_TEST_PATRONI_DCS");
    return v && *v ? v : "etcd";
}

// The tests here need Debian's patroni and etcd-server: [needs:patroni],
// required where every tool is ($SQLOCK_TEST_REQUIRE_ALL=1; the PostgreSQL
// backend's test.conf installs them).
const sqlock_test::DeclareNeed patroni_installed{
    {"patroni",
     [] {
         return sqlock_test::run({"/bin/sh", "-c",
                                  "command -v patroni && command -v patronictl && command -v etcd"})
                            .code == 0
                    ? std::string()
                    : "patroni, patronictl or etcd is missing (Debian: patroni, etcd-server)";
     },
     sqlock_test::require_all}};

struct Event {
    std::string what;
    double from = 0, to = 0;  // wall clock: triggered, and recovered (jobs ran after it)
    double gap = 0;           // the longest the name stood free in between
};

}  // namespace

TEST_CASE(
    "under Patroni, looping sqlock run --wait rides out a switchover, a failover and a "
    "paused leader",
    "[patroni][needs:patroni]") {
    const auto suite_start = steady::now();
    Cluster cluster({"--ttl", "10", "--loop-wait", "2", "--dcs", dcs()});
    WARN("Patroni cluster (synchronous mode, TTL 10 s, loop_wait 2 s, DCS "
         << dcs() << ") up in " << format_seconds(cluster.started_in()) << ", leader "
         << cluster.first_leader());
    const std::string table = "patroni_locks";
    const std::string url = cluster.url();
    {
        const Outcome init = cli(url, {"--table", table, "init"});
        INFO(init.err);
        REQUIRE(init.code == 0);
    }

    {
        // The doctor through the host list: no problem, the leader's entry
        // names the primary, the synchronous standby shown as the server has
        // it.
        const Outcome doctor = cli(url, {"--table", table, "doctor"});
        WARN("sqlock doctor through the multi-host URL (exit " << doctor.code << "):\n"
                                                               << doctor.out << doctor.err);
        CHECK(doctor.code == 0);
        const std::string entry =
            "host 127.0.0.1:" + std::to_string(cluster.port(cluster.leader()));
        const std::size_t at = doctor.out.find(entry + ":");
        REQUIRE(at != std::string::npos);
        const std::string line = doctor.out.substr(at, doctor.out.find('\n', at) - at);
        CHECK_THAT(line, Catch::Matchers::Contains("primary (read-write)"));
        CHECK_THAT(doctor.out, Catch::Matchers::Contains("synchronous_standby_names = 'node"));
    }

    Fleet fleet(url, table, "sw", 4);
    // A newcomer without --wait, on a name of its own, again and again: what
    // a run that does not wait meets at each event.
    Fleet prober(url, table, "probe", 1, "");
    const int settle = 8;  // jobs to see before an event, and after each recovery
    REQUIRE(fleet.await_jobs_after(0, settle, 60s));

    std::vector<Event> events;
    // A held lock whose lease outlasts the switchover and the failover: its
    // renewals must reach each new primary in time.
    Holder held(url, table, "held", "20s");
    REQUIRE(held.await_started());

    // An event: `act` triggers it and returns once Patroni has a new leader
    // accepting writes; recovered when `settle` jobs have started since.
    auto event = [&](const std::string& what, const std::function<void()>& act) {
        Event e{what, wall_now()};
        WARN(what << " at " << format_seconds(seconds_since(suite_start)));
        const auto t = steady::now();
        act();
        const double leader_after = seconds_since(t);
        const double leader_at = wall_now();
        INFO(what << ": jobs did not resume; sqlock's messages:\n" << fleet.errors());
        REQUIRE(fleet.await_jobs_after(leader_at, settle, 60s));
        e.to = wall_now();
        e.gap = longest_gap(fleet.jobs(), e.from, e.to);
        WARN(what << ": done in " << format_seconds(leader_after)
                  << " (what the test awaits: a new leader, a new synchronous standby); the "
                     "name stood free for "
                  << format_seconds(e.gap));
        events.push_back(e);
    };

    // Before each event the cluster is whole again (the former leader back
    // as a replica, a synchronous standby named), as operators would have it.
    cluster.await_healthy();
    event("switchover", [&] {
        const std::string old = cluster.leader();
        cluster.run({"ctl", "switchover", "--force", "--leader", old});
        cluster.await_leader_other_than(old);
    });
    cluster.await_healthy();
    event("failover (the leader's postmaster SIGKILLed)", [&] {
        const std::string old = cluster.leader();
        cluster.run({"crash", old});
        cluster.await_leader_other_than(old);
    });

    // The held lock rode out both: never signalled, released by its own run.
    {
        const Outcome end = held.finish();
        INFO("held lock: sqlock's stderr: " << held.errors());
        CHECK(end.code == 0);
        const std::vector<Job> jobs = held.jobs();
        REQUIRE(jobs.size() == 1);
        CHECK_FALSE(jobs[0].terminated);
        // Held for longer after the switchover struck than a 20 s lease lasts
        // unrenewed before its job is signalled (lease - grace - margin =
        // 10 s): its renewals reached the new primaries.
        CHECK(jobs[0].end - events.at(0).from > 10.0);
        WARN("a run with --expires 20s held its lock for "
             << format_seconds(jobs[0].end - jobs[0].start)
             << " across the switchover and the failover, "
                "never signalled");
    }

    // The leader paused past its TTL: a new leader is elected once its key
    // has expired; then the old one resumes (and must step down).
    cluster.await_healthy();
    Holder paused_holder(url, table, "held-pause", "20s");
    REQUIRE(paused_holder.await_started());
    std::string paused;
    event("leader paused (SIGSTOP) past its TTL", [&] {
        paused = cluster.leader();
        cluster.run({"pause", paused});
        cluster.await_leader_other_than(paused);
    });
    const std::string elected = cluster.leader();
    event("paused leader resumed (SIGCONT)", [&] { cluster.run({"resume", paused}); });
    // Once it has run again for a while, it has not taken the lead back: the
    // leader is still the one elected while it was frozen.
    CHECK(cluster.leader() == elected);
    {
        const Outcome end = paused_holder.finish();
        const std::vector<Job> jobs = paused_holder.jobs();
        REQUIRE(jobs.size() == 1);
        // Either it rode out the pause, or it was stopped in time (exit 79,
        // its job SIGTERMed): never anything else.
        INFO("held lock across the pause: sqlock's stderr: " << paused_holder.errors());
        CHECK((end.code == 0 || end.code == 79));
        CHECK(jobs[0].terminated == (end.code == 79));
        WARN("a run with --expires 20s across the paused leader: exit "
             << end.code << (jobs[0].terminated ? ", its job SIGTERMed" : ", never signalled"));
    }

    // A standby frozen, listed before the leader in a holder's URL: every
    // connection that tries it first waits its connect_timeout (2 s), more
    // than a 6 s lease's renewal may take (1 s). The holder's renewals ask
    // the server that served it last first, and get through.
    cluster.await_healthy();
    {
        const std::string standby = cluster.running_in_role("replica");
        REQUIRE_FALSE(standby.empty());
        Holder through(with_first_port(url, cluster.port(standby)), table, "standby-first", "6s");
        REQUIRE(through.await_started());
        const std::string leader = cluster.leader();
        event("a standby listed first frozen (SIGSTOP)", [&] {
            cluster.run({"pause", standby});
            // Three renewals of the holder's row while the standby is frozen.
            std::vector<std::string> seen;
            const auto deadline = steady::now() + 30s;
            while (seen.size() < 4 && steady::now() < deadline) {
                const std::string expires = cluster.run(
                    {"psql", leader, "-At", "-c",
                     "SELECT expires FROM " + table + " WHERE lockstring = 'standby-first'"});
                if (seen.empty() || seen.back() != expires) seen.push_back(expires);
                std::this_thread::sleep_for(100ms);
            }
            CHECK(seen.size() >= 4);
        });
        cluster.run({"resume", standby});
        const Outcome end = through.finish();
        INFO("holder with the frozen standby first: sqlock's stderr: " << through.errors());
        CHECK(end.code == 0);
        const std::vector<Job> jobs = through.jobs();
        REQUIRE(jobs.size() == 1);
        CHECK_FALSE(jobs[0].terminated);
    }

    // The synchronous standby frozen: commits wait for it until Patroni,
    // its member key expired (TTL), names the other replica.
    cluster.await_healthy();
    std::string frozen_sync;
    event("the synchronous standby frozen (SIGSTOP) past the TTL", [&] {
        frozen_sync = cluster.running_in_role("sync_standby");
        REQUIRE_FALSE(frozen_sync.empty());
        cluster.run({"pause", frozen_sync});
        REQUIRE(sqlock_test::eventually(
            [&] {
                try {
                    return !cluster.running_in_role("sync_standby", frozen_sync).empty();
                } catch (const std::exception&) {
                    return false;
                }
            },
            60s));
    });
    event("the synchronous standby resumed (SIGCONT)", [&] {
        cluster.run({"resume", frozen_sync});
    });

    fleet.stop();
    CHECK(fleet.hung() == 0);
    prober.stop();
    const std::vector<Run> probes = prober.runs();
    const std::vector<Job> jobs = fleet.jobs();
    const std::vector<Run> runs = fleet.runs();

    // Exit codes, counted, and sqlock's messages, each with how often.
    std::map<int, int> by_code;
    for (const Run& r : runs) ++by_code[r.code];
    std::ostringstream codes;
    for (auto& [code, n] : by_code) codes << " exit " << code << ": " << n << ";";
    std::map<std::string, int> messages;
    {
        std::istringstream lines(fleet.errors());
        for (std::string line; std::getline(lines, line);) {
            const std::size_t colon = line.find(": ");  // after "CODE PID"
            const std::string code = line.substr(0, line.find(' '));
            ++messages["exit " + code + ": " +
                       (colon == std::string::npos ? line : line.substr(colon + 2))];
        }
    }
    std::ostringstream said;
    for (auto& [message, n] : messages) said << "\n  " << n << " x " << message;
    WARN(runs.size() << " runs, " << jobs.size() << " jobs;" << codes.str()
                     << "\nsqlock's messages:" << said.str());
    // Every run ran its job: the outages were shorter than each run's wait,
    // so none gave up (75), none was refused for the database being down or
    // read-only (69, 78), none met an internal error (70). A job stopped by
    // its heartbeat (79: its 6 s lease could not be renewed in time) ran.
    int unexpected = 0;
    for (auto& [code, n] : by_code)
        if (code != 0 && code != 79) unexpected += n;
    INFO("runs by exit code:" << codes.str());
    CHECK(unexpected == 0);
    for (const Event& e : events) CHECK(e.gap < 20.0);

    // The jobs' own records: no two overlap, fencing ids rise in start order.
    REQUIRE(jobs.size() >= static_cast<std::size_t>(settle * (events.size() + 1)));
    double busy_until = 0;
    long long last_id = 0;
    int overlaps = 0, id_inversions = 0, unended = 0;
    for (const Job& j : jobs) {
        if (j.start < busy_until) {
            ++overlaps;
            UNSCOPED_INFO("job " << j.id << " started " << format_seconds(busy_until - j.start)
                                 << " before the previous one ended");
        }
        if (j.id <= last_id) {
            ++id_inversions;
            UNSCOPED_INFO("job " << j.id << " started after job " << last_id);
        }
        if (!j.ended) ++unended;
        busy_until = std::max(busy_until, j.ended ? j.end : 1e300);
        last_id = std::max(last_id, j.id);
    }
    CHECK(overlaps == 0);
    CHECK(id_inversions == 0);
    CHECK(unended == 0);  // every job ended or wrote its SIGTERM

    // The history, through the cluster: every job ran under a recorded run,
    // the runs' fencing ids rise in start order, and no run that recorded
    // its end overlaps the next one.
    const Outcome h = cli(url, {"--table", table, "history", "sw", "--json", "--limit", "100000"});
    INFO(h.err);
    REQUIRE(h.code == 0);
    nlohmann::json history = nlohmann::json::parse(h.out);
    std::vector<nlohmann::json> recorded(history.begin(), history.end());
    std::sort(recorded.begin(), recorded.end(),
              [](const nlohmann::json& a, const nlohmann::json& b) {
                  return a["fencing_id"].get<long long>() < b["fencing_id"].get<long long>();
              });
    std::map<long long, const nlohmann::json*> by_fencing_id;
    for (const nlohmann::json& r : recorded) by_fencing_id[r["fencing_id"].get<long long>()] = &r;
    int missing = 0;
    for (const Job& j : jobs)
        if (!by_fencing_id.count(j.id)) ++missing;
    CHECK(missing == 0);
    int history_inversions = 0, history_overlaps = 0;
    for (std::size_t i = 1; i < recorded.size(); ++i) {
        const nlohmann::json& a = recorded[i - 1];
        const nlohmann::json& b = recorded[i];
        if (sqlock_test::seconds_between(a["started"], b["started"]) < 0) ++history_inversions;
        if (!a["ended"].is_null() && a["outcome"] != "lost" &&
            sqlock_test::seconds_between(a["ended"], b["started"]) < 0)
            ++history_overlaps;
    }
    CHECK(history_inversions == 0);
    CHECK(history_overlaps == 0);

    // The measurements, together.
    std::map<long, double> job_start_of;  // by the pid of the run that ran it
    for (const Job& j : jobs) job_start_of[j.pid] = j.start;
    std::ostringstream summary;
    for (const Event& e : events) {
        std::map<int, int> event_codes;
        int waited = 0;
        // The longest a run in line when it struck waited on from then, and
        // the longest a run started during it waited for its job.
        double waiter = 0, newcomer = 0;
        for (const Run& r : runs)
            if (r.end > e.from && r.start < e.to) {
                ++event_codes[r.code];
                if (r.start < e.from) ++waited;
                const auto started = job_start_of.find(r.pid);
                if (started == job_start_of.end()) continue;
                if (r.start < e.from && started->second > e.from)
                    waiter = std::max(waiter, started->second - e.from);
                if (r.start >= e.from) newcomer = std::max(newcomer, started->second - r.start);
            }
        // The newcomer without a wait: how its runs ended, and for how long
        // they failed (from the first failing one's start to the last one's
        // end).
        std::map<int, int> probe_codes;
        double failing_from = 0, failing_to = 0, longest_probe = 0;
        for (const Run& r : probes)
            if (r.start >= e.from && r.start <= e.to) {
                ++probe_codes[r.code];
                longest_probe = std::max(longest_probe, r.end - r.start);
                if (r.code == 0) continue;
                if (failing_from == 0) failing_from = r.start;
                failing_to = r.end;
            }
        std::ostringstream newcomers;
        for (auto& [code, n] : probe_codes) newcomers << " exit " << code << ": " << n << ";";
        summary << "\n  " << e.what << ": a newcomer without --wait failed for "
                << format_seconds(failing_to - failing_from) << ", a run of it took up to "
                << format_seconds(longest_probe) << " (" << newcomers.str() << ")";
        summary << "\n  " << e.what << ": the name stood free " << format_seconds(e.gap) << "; "
                << waited << " runs were under way when it struck; a run in line then waited "
                << format_seconds(waiter) << " more at most, one started during it "
                << format_seconds(newcomer) << " for its job at most;";
        for (auto& [code, n] : event_codes) summary << " exit " << code << ": " << n << ";";
    }
    cluster.stop();
    WARN("under Patroni, per event:" << summary.str() << "\nwhole case (cluster start to stop): "
                                     << format_seconds(seconds_since(suite_start)));
}

TEST_CASE(
    "with asynchronous replication, a crash failover loses what the standbys had not "
    "received: a held lock's row, a once-per window's run",
    "[patroni][async][needs:patroni]") {
    const auto case_start = steady::now();
    Cluster cluster({"--async", "--ttl", "10", "--loop-wait", "2", "--dcs", dcs()});
    const std::string table = "patroni_async";
    const std::string url = cluster.url();
    REQUIRE(cli(url, {"--table", table, "init"}).code == 0);
    const std::string once_file = sqlock_test::scratch_dir() + "/once-per-runs";
    const std::vector<std::string> once_per = {
        "--table",    table,
        "run",        "daily",
        "--once-per", "1h",
        "--",         "/bin/sh",
        "-c",         "echo \"$SQLOCK_ID $SQLOCK_WINDOW_START\" >> \"$1\"",
        "job",        once_file};

    // The standbys stop receiving (the primary's WAL senders frozen): every
    // commit from here on is on the primary alone.
    const std::string old = cluster.leader();
    cluster.run({"hold-wal", old});
    Holder holder(url, table, "lost", "30s");
    REQUIRE(holder.await_started());
    const long long held_id = holder.jobs().at(0).id;
    {
        const Outcome first = cli(url, once_per);
        INFO(first.err);
        REQUIRE(first.code == 0);
    }
    // The doctor says what is at stake before anything is lost.
    const Outcome doctor_before = cli(url, {"--table", table, "doctor"});
    CHECK(doctor_before.code == 78);
    CHECK_THAT(doctor_before.out + doctor_before.err,
               Catch::Matchers::Contains("from this primary asynchronously"));

    // The primary dies with them unsent; Patroni fails over to a standby
    // within maximum_lag_on_failover (1 MB: a lock row is a few hundred bytes).
    const double crash_at = wall_now();
    cluster.run({"crash", old});
    const std::string promoted = cluster.await_leader_other_than(old);
    const double promoted_after = wall_now() - crash_at;

    // The held lock's row is not on the new primary: the name is free.
    CHECK(cluster.run({"psql", promoted, "-At", "-c",
                       "SELECT count(*) FROM " + table + " WHERE lockstring = 'lost'"}) == "0");
    Holder newcomer(url, table, "lost", "30s");
    REQUIRE(newcomer.await_started());
    const Job second = newcomer.jobs().at(0);
    // The first holder learns it at its next renewal (every 5 s): its job
    // is stopped (SIGTERM), sqlock exits 79.
    const std::optional<int> first_end = holder.await_exit(40s);
    INFO("first holder's stderr: " << holder.errors());
    REQUIRE(first_end);
    CHECK(*first_end == 79);
    const Job first = holder.jobs().at(0);
    CHECK(first.terminated);
    const double both_ran = first.end - second.start;
    // The newcomer's own run: when the lost holder's fencing id and run id
    // were handed out again (the sequences' advance was lost as well), the
    // lost holder's end of run is written onto the newcomer's run, which then
    // ends recorded as lost (exit 79) though its job ran to its end.
    const Outcome newcomer_end = newcomer.finish();
    {
        INFO("newcomer's stderr: " << newcomer.errors());
        CHECK((newcomer_end.code == 0 || newcomer_end.code == 79));
        CHECK_FALSE(newcomer.jobs().at(0).terminated);
    }

    // The once-per window's run is gone too: the job runs again in the same
    // window.
    {
        const Outcome again = cli(url, once_per);
        INFO(again.err);
        CHECK(again.code == 0);
    }
    std::vector<std::string> once_runs;
    {
        std::istringstream lines(sqlock_test::read_file(once_file));
        for (std::string line; std::getline(lines, line);) once_runs.push_back(line);
    }
    CHECK(once_runs.size() == 2);
    const Outcome doctor_after = cli(url, {"--table", table, "doctor"});
    cluster.stop();

    WARN("asynchronous replication, crash failover: new leader "
         << format_seconds(promoted_after) << " after the crash; the lock row held (fencing id "
         << held_id << ") was lost: a newcomer took the name with fencing id " << second.id << " ("
         << (second.id <= held_id ? "not above" : "above") << " the lost holder's) "
         << format_seconds(second.start - crash_at) << " after the crash, and both jobs ran for "
         << format_seconds(both_ran) << ", until the first holder's renewal found its row gone "
         << "(exit " << (first_end ? *first_end : -1) << "); the newcomer exited "
         << newcomer_end.code << "; the once-per window ran " << once_runs.size() << " times\n"
         << "doctor before the crash (exit " << doctor_before.code << "):\n"
         << doctor_before.out << doctor_before.err << "doctor after (exit " << doctor_after.code
         << "):\n"
         << doctor_after.out << doctor_after.err
         << "whole case (cluster start to stop): " << format_seconds(seconds_since(case_start)));
}
