// Availability: a database that is unavailable for a few seconds, as a
// production one is during a restart, a failover or a switchover (stopped,
// or read-only), and one whose server-wide defaults a DBA chose, through
// `sqlock run` in several processes. On a server of this program's own
// (PrivateServer), started with the hostile defaults of the backend's
// server.sh (transactions serializable, low statement, lock and idle
// timeouts), so that every test here runs under them, and stopping it or
// making it read-only disturbs no other suite.
//
//   - serializable and repeatable read defaults: 6 processes x 5 runs on one
//     name, every run exits 0, one job at a time;
//   - a waiter started while the server is stopped, or read-only, waits it
//     out (exit 0, its job ran once); without a wait it fails at once (69,
//     78); a wait shorter than the spell ends naming it (78, read-only);
//   - a held lock whose lease cannot be renewed through a read-only spell
//     is stopped in time with a message naming read-only (79); one whose
//     lease outlasts the spell rides it out;
//   - a release that meets a stopped server keeps trying while the lease
//     runs, and frees the name once the server is back.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <thread>

#include "private_server.hpp"
#include "reliability_support.hpp"

using namespace std::chrono_literals;
using reliability::PrivateServer;
using sqlock_test::eventually;
using sqlock_test::read_file;
using sqlock_test::spawn_options;

namespace {

const char* const cli = SQLOCK_CLI;

// The server every test here shares, started on first use and stopped when
// the program ends.
PrivateServer& server() {
    static std::unique_ptr<PrivateServer> one;
    if (!one) {
        const std::string& variable = sqlock_test::backend_context().script_variable;
        const char* script = std::getenv(variable.c_str());
        INFO(variable);
        REQUIRE(script);
        one = std::make_unique<PrivateServer>(script, /*hostile=*/true);
    }
    return *one;
}

const sqlock_test::BackendHooks& hooks() {
    return sqlock_test::backend_context().hooks;
}

// A fresh lock table on the private server, made ready by `sqlock init`;
// the server as it was started (a test that failed half-way may have left
// it halted or read-only).
std::string fresh_table() {
    server().recover();
    static int n = 0;
    const std::string table = "avail_" + std::to_string(::getpid()) + "_" + std::to_string(++n);
    auto r = sqlock_test::run({cli, "--table", table, "init"}, {{"SQLOCK_DB", server().url()}});
    INFO(r.err);
    REQUIRE(r.code == 0);
    return table;
}

// The job: fails (3) if another one runs at the same moment (a directory
// only one can make), else adds a line to "$1/ran".
const std::string job =
    "mkdir \"$1/in\" 2>/dev/null || { echo overlap >> \"$1/overlap\"; exit 3; }; "
    "echo ran >> \"$1/ran\"; sleep 0.02; rmdir \"$1/in\"";

int lines(const std::string& path) {
    const std::string text = read_file(path);
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A directory of its own for one test's jobs.
std::string job_dir() {
    static int n = 0;
    const std::string dir = sqlock_test::scratch_dir() + "/avail" + std::to_string(++n);
    REQUIRE(std::system(("mkdir -p '" + dir + "'").c_str()) == 0);
    return dir;
}

// `sqlock run NAME OPTIONS... -- sh -c JOB job DIR` on `table`, its events
// in JSON on stderr (to `err`).
std::unique_ptr<sqlock_test::Process> start_run(const std::string& table, const std::string& name,
                                                std::vector<std::string> options,
                                                const std::string& script, const std::string& dir,
                                                const std::string& err) {
    std::vector<std::string> argv{cli, "--table", table, "run", name, "--log-format", "json"};
    argv.insert(argv.end(), options.begin(), options.end());
    for (const std::string& tail : {std::string("--"), std::string("/bin/sh"), std::string("-c"),
                                    script, std::string("job"), dir})
        argv.push_back(tail);
    return std::make_unique<sqlock_test::Process>(argv,
                                                  sqlock_test::Env{{"SQLOCK_DB", server().url()}},
                                                  spawn_options().stderr_path(err).own_group(true));
}

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

bool said(const std::string& err, const std::string& text) {
    return read_file(err).find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("under serializable and repeatable read defaults, every run of a crowd succeeds",
          "[availability][isolation]") {
    const std::string table = fresh_table();
    for (const std::string& isolation : {hooks().serializable, hooks().repeatable_read}) {
        INFO("default isolation " << isolation);
        server().set(hooks().isolation_setting, isolation);
        const std::string dir = job_dir();
        // 6 hosts, each running the job 5 times on one name, waiting for it.
        std::vector<std::unique_ptr<sqlock_test::Process>> hosts;
        for (int h = 0; h < 6; ++h) {
            const std::string loop =
                "for i in 1 2 3 4 5; do \"$0\" --table \"$1\" run crowd --expires 10s --wait 60s "
                "-- /bin/sh -c \"$2\" job \"$3\"; echo $? >> \"$3/codes\"; done";
            hosts.push_back(std::make_unique<sqlock_test::Process>(
                std::vector<std::string>{"/bin/sh", "-c", loop, cli, table, job, dir},
                sqlock_test::Env{{"SQLOCK_DB", server().url()}},
                spawn_options().stderr_path(dir + "/err" + std::to_string(h)).own_group(true)));
        }
        for (auto& host : hosts) CHECK(host->wait(180s).code == 0);
        std::string errors;
        for (int h = 0; h < 6; ++h) errors += read_file(dir + "/err" + std::to_string(h));
        INFO(errors);
        const std::string codes = read_file(dir + "/codes");
        CHECK(lines(dir + "/codes") == 30);
        CHECK(codes.find_first_not_of("0\n") == std::string::npos);  // every run exited 0
        CHECK(lines(dir + "/ran") == 30);
        CHECK(read_file(dir + "/overlap").empty());
    }
    server().set(hooks().isolation_setting, "DEFAULT");
}

TEST_CASE("a waiter started while the server is stopped waits until it is back",
          "[availability][outage]") {
    const std::string table = fresh_table();
    const std::string dir = job_dir();
    server().halt();
    // Without a wait: at once, unavailable.
    const auto before = std::chrono::steady_clock::now();
    auto at_once = sqlock_test::run({cli, "--table", table, "run", "now", "--", "true"},
                                    {{"SQLOCK_DB", server().url()}});
    CHECK(at_once.code == 69);
    CHECK(std::chrono::steady_clock::now() - before < 10s);
    // With one: the server comes back within it, and the job runs once.
    auto waiter = start_run(table, "downwait", {"--wait", "20s"}, job, dir, dir + "/err");
    REQUIRE(eventually([&] { return said(dir + "/err", "\"waiting_through\""); }, 15s));
    CHECK(said(dir + "/err", "\"cause\":\"unavailable\""));
    std::this_thread::sleep_for(3s);  // the outage itself
    server().start();
    const sqlock_test::Outcome done = waiter->wait(30s);
    INFO(read_file(dir + "/err"));
    CHECK(done.code == 0);
    CHECK(lines(dir + "/ran") == 1);
}

TEST_CASE("a waiter started while the server is read-only waits until it takes writes",
          "[availability][read-only]") {
    const std::string table = fresh_table();
    const std::string dir = job_dir();
    server().set(hooks().read_only_setting, hooks().read_only_on);
    // Without a wait: at once, a configuration error naming read-only.
    auto at_once = sqlock_test::run({cli, "--table", table, "run", "now", "--", "true"},
                                    {{"SQLOCK_DB", server().url()}});
    CHECK(at_once.code == 78);
    CHECK_THAT(at_once.err, Catch::Matchers::Contains("read-only"));
    // A wait shorter than the spell: the same at its end, saying so.
    auto short_wait =
        sqlock_test::run({cli, "--table", table, "run", "short", "--wait", "1s", "--", "true"},
                         {{"SQLOCK_DB", server().url()}});
    CHECK(short_wait.code == 78);
    CHECK_THAT(short_wait.err, Catch::Matchers::Contains("gave up waiting for lock 'short'"));
    CHECK_THAT(short_wait.err, Catch::Matchers::Contains("read-only for the last"));
    // A wait that outlasts it: the job runs once, when it ends.
    auto waiter = start_run(table, "other2", {"--wait", "15s"}, job, dir, dir + "/err");
    REQUIRE(eventually([&] { return said(dir + "/err", "\"cause\":\"read_only\""); }, 10s));
    std::this_thread::sleep_for(3s);  // the rest of the read-only spell
    server().set(hooks().read_only_setting, "DEFAULT");
    const sqlock_test::Outcome done = waiter->wait(30s);
    INFO(read_file(dir + "/err"));
    CHECK(done.code == 0);
    CHECK(lines(dir + "/ran") == 1);
}

TEST_CASE("a held lock that cannot be renewed through a read-only spell is stopped, naming it",
          "[availability][read-only]") {
    const std::string table = fresh_table();
    const std::string dir = job_dir();
    const std::string long_job = "touch \"$1/started\"; sleep 30";
    auto holder = start_run(table, "held", {"--expires", "3s"}, long_job, dir, dir + "/err");
    REQUIRE(eventually([&] { return exists(dir + "/started"); }, 15s));
    server().set(hooks().read_only_setting, hooks().read_only_on);
    const sqlock_test::Outcome done = holder->wait(20s);
    server().set(hooks().read_only_setting, "DEFAULT");
    const std::string err = read_file(dir + "/err");
    INFO(err);
    CHECK(done.code == 79);
    CHECK_THAT(err, Catch::Matchers::Contains("\"event\":\"fencing\""));
    CHECK_THAT(err, Catch::Matchers::Contains("the database is read-only"));
    CHECK_THAT(err, Catch::Matchers::Contains("\"cause\":\"read_only\""));
}

TEST_CASE("a held lock whose lease outlasts a read-only spell rides it out",
          "[availability][read-only]") {
    const std::string table = fresh_table();
    const std::string dir = job_dir();
    const std::string job_6s = "touch \"$1/started\"; sleep 6";
    auto holder = start_run(table, "rides", {"--expires", "12s"}, job_6s, dir, dir + "/err");
    REQUIRE(eventually([&] { return exists(dir + "/started"); }, 15s));
    server().set(hooks().read_only_setting, hooks().read_only_on);
    std::this_thread::sleep_for(3s);  // the spell: at least one renewal fails
    server().set(hooks().read_only_setting, "DEFAULT");
    const sqlock_test::Outcome done = holder->wait(30s);
    INFO(read_file(dir + "/err"));
    CHECK(done.code == 0);
}

TEST_CASE("a release that meets a stopped server tries again while the lease runs",
          "[availability][outage]") {
    const std::string table = fresh_table();
    const std::string dir = job_dir();
    // The job ends when the test says: while the server is stopped.
    const std::string ends_on_cue =
        "touch \"$1/started\"; while [ ! -e \"$1/go\" ]; do sleep 0.05; done";
    const auto started = std::chrono::steady_clock::now();
    auto holder =
        start_run(table, "releases", {"--expires", "30s"}, ends_on_cue, dir, dir + "/err");
    REQUIRE(eventually([&] { return exists(dir + "/started"); }, 15s));
    server().halt();
    REQUIRE(std::system(("touch '" + dir + "/go'").c_str()) == 0);
    std::this_thread::sleep_for(2s);  // the outage, at the job's end
    server().start();
    const sqlock_test::Outcome done = holder->wait(40s);
    const std::string err = read_file(dir + "/err");
    INFO(err);
    CHECK(done.code == 0);
    CHECK_THAT(err, Catch::Matchers::Contains("\"event\":\"released\""));
    CHECK(err.find("releasing the lock failed") == std::string::npos);
    // Freed when the server came back, long before the lease would end.
    CHECK(std::chrono::steady_clock::now() - started < 25s);
    const auto rows =
        sqlock_test::query(sqlock_test::Database{server().url(), table},
                           "SELECT count(*) FROM " + table + " WHERE lockstring = 'releases'");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].at(0) == std::optional<std::string>("0"));
}
