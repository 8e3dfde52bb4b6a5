// The `sqlock` command under hostile input, and its security promises.
//
// A table of bad names, durations, flags, exit codes, table names and URLs:
// each must exit with its documented code (64 bad usage or input, 69
// unreachable, 78 configuration), print exactly one line on stderr and
// nothing on stdout, and leave the lock table byte-for-byte as it was. With
// PostgreSQL every invocation carries the server's real password in --db,
// and no output may contain it. Then: /proc/PID/cmdline of a running
// `sqlock run`, `release --force` and `reap` deleting exactly what they say,
// the private default database, and a least-privilege role.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "reliability_support.hpp"

using namespace std::chrono_literals;
using sqlock_test::eventually;
using sqlock_test::fresh_database;
using sqlock_test::lock_options;
using sqlock_test::Outcome;
using sqlock_test::read_file;
using sqlock_test::spawn_options;

extern char** environ;

namespace {

const char* const cli = SQLOCK_CLI;
const std::string planted_password = "Pl4ntedCliSecret";

struct Case {
    std::string label;
    std::vector<std::string> args;  // after `sqlock --db URL --table T` unless `bare`
    int expected;
    bool bare = false;  // no --db/--table prepended
    sqlock_test::Env env = {};
};

std::string show(const Outcome& o) {
    return "exit " + std::to_string(o.code) + "\nstdout: " + o.out + "\nstderr: " + o.err;
}

bool exactly_one_line(const std::string& s) {
    return !s.empty() && s.back() == '\n' && s.find('\n') == s.size() - 1;
}

Outcome sqlock_cmd(const sqlock_test::Database& db, std::vector<std::string> args,
                   sqlock_test::Env env = {}) {
    args.insert(args.begin(), {cli, "--db", db.url, "--table", db.table});
    // Keep the user's own SQLOCK_DB / SQLOCK_TOKEN out of it.
    env.emplace("SQLOCK_DB", std::nullopt);
    env.emplace("SQLOCK_TOKEN", std::nullopt);
    return sqlock_test::run(args, env, {}, 60s);
}

}  // namespace

TEST_CASE("hostile input to the CLI: documented exit code, one line, table unchanged",
          "[cli][hostile][needs:table_dump_sql][needs:hostile_inputs]") {
    auto db = fresh_database();
    const reliability::Bystanders bystanders(db);
    const std::string before = reliability::dump_table(db);
    const std::string n129(129, 'n');
    const std::string missing_dir = sqlock_test::scratch_dir() + "/no/such/dir/x.db";
    // An existing database: for a missing file the CLI answers 78 ("run
    // sqlock init") before it looks at the parameters.
    const std::string sqlite_url = "sqlite://" + sqlock_test::scratch_dir() + "/cli-params.db";
    sqlock::Locker(sqlite_url).init();
    auto with_db = [&](const std::string& url, std::vector<std::string> rest) {
        rest.insert(rest.begin(), {"--db", url, "--table", db.table});
        return rest;
    };

    std::vector<Case> cases = {
        // Names.
        {"empty name", {"acquire", ""}, 64},
        {"129-byte name", {"acquire", n129}, 64},
        {"invalid UTF-8 name", {"acquire", "\xff\xfe"}, 64},
        {"overlong UTF-8 name", {"run", "\xc0\xaf", "--", "true"}, 64},
        {"surrogate in name", {"show", "\xed\xa0\x80"}, 64},
        {"truncated UTF-8 name", {"release", "x\xe2\x82", "--force"}, 64},
        {"empty name to run", {"run", "", "--", "true"}, 64},
        {"semaphore name too long for its slots",
         {"acquire", std::string(127, 's'), "--slots", "10"},
         64},
        // Durations.
        {"zero lease", {"acquire", "x", "--expires", "0"}, 64},
        {"negative lease", {"acquire", "x", "--expires=-5"}, 64},
        {"fractional lease", {"acquire", "x", "--expires", "1.5h"}, 64},
        {"lease not a duration", {"acquire", "x", "--expires", "abc"}, 64},
        {"lease of 367 days", {"acquire", "x", "--expires", "367d"}, 64},
        {"lease overflowing", {"acquire", "x", "--expires", "99999999999999999999"}, 64},
        {"empty lease", {"run", "x", "--expires", "", "--", "true"}, 64},
        {"negative wait", {"acquire", "x", "--wait=-1"}, 64},
        {"unit twice in wait", {"acquire", "x", "--wait", "1h1h"}, 64},
        {"bad minimum hold", {"run", "x", "--min-hold", "soon", "--", "true"}, 64},
        // Slots.
        {"zero slots", {"acquire", "x", "--slots", "0"}, 64},
        {"negative slots", {"acquire", "x", "--slots=-1"}, 64},
        {"slots not a number", {"acquire", "x", "--slots", "abc"}, 64},
        {"fractional slots", {"run", "x", "--slots", "1.5", "--", "true"}, 64},
        {"10001 slots", {"acquire", "x", "--slots", "10001"}, 64},
        {"slots overflowing", {"acquire", "x", "--slots", "99999999999999999999"}, 64},
        // Exit codes and actions.
        {"conflict exit code 256", {"run", "x", "--conflict-exit-code", "256", "--", "true"}, 64},
        {"conflict exit code -1", {"run", "x", "--conflict-exit-code=-1", "--", "true"}, 64},
        {"conflict exit code 1000", {"run", "x", "--conflict-exit-code", "1000", "--", "true"}, 64},
        {"conflict exit code not a number",
         {"run", "x", "--conflict-exit-code", "75x", "--", "true"},
         64},
        {"unknown --on-lost action", {"run", "x", "--on-lost", "explode", "--", "true"}, 64},
        // Flags and arguments.
        {"no command", {}, 64},
        {"unknown command", {"frobnicate"}, 64},
        {"unknown flag", {"acquire", "x", "--bogus"}, 64},
        {"flag of another command", {"list", "--force"}, 64},
        {"acquire without a name", {"acquire"}, 64},
        {"acquire with a name given twice", {"acquire", "a", "b", "a"}, 64},
        {"run with a name given twice", {"run", "a", "b", "a", "--", "true"}, 64},
        {"a set of semaphores", {"acquire", "a", "b", "--slots", "2"}, 64},
        {"run without a command", {"run", "x"}, 64},
        {"run with an empty command", {"run", "x", "--"}, 64},
        {"release without token or --force", {"release", "x"}, 64},
        {"release with token and --force", {"release", "x", "--token", "t", "--force"}, 64},
        {"reap with an argument", {"reap", "now"}, 64},
        {"show without a name", {"show"}, 64},
        {"--db without a value", {cli, "--db"}, 64, true},
        // Table names.
        {"empty table name", with_db(db.url, {"--table", "", "list"}), 64, true},
        {"table starting with a digit", with_db(db.url, {"--table", "1abc", "list"}), 64, true},
        {"table with a semicolon", with_db(db.url, {"--table", "x;drop", "list"}), 64, true},
        {"table with SQL",
         with_db(db.url, {"--table", "sqlock_locks; DROP TABLE sqlock_locks", "list"}), 64, true},
        {"three-part table name", with_db(db.url, {"--table", "a.b.c", "list"}), 64, true},
        {"table that does not exist", with_db(db.url, {"--table", "no_such_table", "list"}), 78,
         true},
        // URLs.
        {"unknown scheme", with_db("oracle://u:" + planted_password + "@h/db", {"list"}), 64, true},
        {"no scheme", with_db("/just/a/path.db", {"list"}), 64, true},
        {"SQLite URL with a host", with_db("sqlite://host/x.db", {"list"}), 64, true},
        {"SQLite URL without a file", with_db("sqlite:", {"list"}), 64, true},
        {"bad busy_timeout", with_db(sqlite_url + "?busy_timeout=abc", {"list"}), 64, true},
        {"unknown SQLite parameter", with_db(sqlite_url + "?mode=ro", {"list"}), 64, true},
        // The CLI reports a missing database file as configuration (78, "run
        // sqlock init"), a missing directory included.
        {"SQLite file in a missing directory", with_db("sqlite://" + missing_dir, {"list"}), 78,
         true},
        {"PostgreSQL nobody listens on",
         with_db("postgresql://u:" + planted_password + "@127.0.0.1:1/db?connect_timeout=5",
                 {"list"}),
         69, true},
        {"PostgreSQL password in the query",
         with_db("postgresql://127.0.0.1:1/db?user=u&password=" + planted_password, {"list"}), 69,
         true},
        // `--db "$UNSET"` must not lock in this host's default database.
        {"an empty --db", {cli, "--db", "", "--table", db.table, "list"}, 64, true},
        {"an empty --token", {"release", "x", "--token", ""}, 64, false, {{"SQLOCK_TOKEN", "t"}}},
        {"SQLOCK_DB with an unknown scheme",
         {cli, "list"},
         64,
         true,
         {{"SQLOCK_DB", "oracle://u:" + planted_password + "@h/db"}}},
        {"no HOME for the default database",
         {cli, "list"},
         78,
         true,
         {{"SQLOCK_DB", std::nullopt}, {"HOME", std::nullopt}, {"XDG_STATE_HOME", std::nullopt}}},
    };

    // And the URLs refused only on this backend, as the CLI answers them.
    for (const sqlock_test::HostileInput& input :
         sqlock_test::backend_context().hooks.hostile_inputs(planted_password))
        if (input.cli_exit != 0 && !input.url.empty())
            cases.push_back({input.what, with_db(input.url, {"list"}), input.cli_exit, true});
    const std::string server_password = sqlock_test::password_of(db.url);
    int count = 0;
    for (const auto& c : cases) {
        INFO("case: " << c.label);
        Outcome o;
        if (c.bare) {
            std::vector<std::string> args = c.args;
            if (args.empty() || args[0] != cli) args.insert(args.begin(), cli);
            sqlock_test::Env env = c.env;
            env.emplace("SQLOCK_DB", std::nullopt);
            env.emplace("SQLOCK_TOKEN", std::nullopt);
            o = sqlock_test::run(args, env, {}, 60s);
        } else {
            o = sqlock_cmd(db, c.args, c.env);
        }
        INFO(show(o));
        CHECK(o.code == c.expected);
        CHECK(exactly_one_line(o.err));
        CHECK(o.out.empty());
        for (const auto& secret : {planted_password, server_password})
            if (!secret.empty()) CHECK((o.out + o.err).find(secret) == std::string::npos);
        ++count;
    }
    CHECK(reliability::dump_table(db) == before);
    WARN("hostile CLI inputs (" << sqlock_test::backend() << "): " << count);
}

TEST_CASE("no password in any output of any command, failing or not",
          "[cli][security][needs:server]") {
    // Needs a URL with a password.
    auto db = fresh_database();
    const std::string password = sqlock_test::password_of(db.url);
    REQUIRE(password.size() >= 8);
    std::string wrong = db.url;
    wrong.replace(wrong.find(password), password.size(), password + "X");
    std::vector<std::vector<std::string>> invocations = {
        {"init"},
        {"-v", "init"},
        {"acquire", "pw-lock", "--expires", "1h"},
        {"-v", "acquire", "pw-lock"},  // busy: names the holder and the database
        {"acquire", "pw-lock", "--wait", "300ms"},
        {"acquire", "pw-lock", "--json"},
        {"list"},
        {"-v", "list", "--json"},
        {"show", "pw-lock"},
        {"show", "pw-lock", "--json"},
        {"show", "absent"},
        {"-v", "run", "pw-run", "--", "true"},
        {"run", "pw-lock", "--", "true"},
        {"run", "pw-run", "--", "sh", "-c", "exit 3"},
        {"run", "pw-run", "--", "/no/such/program"},
        {"release", "pw-lock", "--token", "not-the-owner"},
        {"-v", "release", "pw-lock", "--force"},
        {"reap", "--dry-run"},
        {"-v", "reap", "--json"},
        {"--help"},
        {"--version"},
    };
    int runs = 0;
    for (const auto& args : invocations) {
        Outcome o = sqlock_cmd(db, args);
        INFO(show(o));
        CHECK((o.out + o.err).find(password) == std::string::npos);
        ++runs;
    }
    // Failures on the way in: wrong password, unreachable, bad options.
    for (const auto& url : {wrong, sqlock_test::with_user(db.url, "nobody_at_all")}) {
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"list"}, {"-v", "acquire", "x"}, {"run", "x", "--", "true"}, {"reap"}}) {
            std::vector<std::string> full = {cli, "--db", url, "--table", db.table};
            full.insert(full.end(), args.begin(), args.end());
            Outcome o = sqlock_test::run(full, {{"SQLOCK_DB", std::nullopt}});
            INFO(show(o));
            CHECK(o.code != 0);
            CHECK((o.out + o.err).find(password) == std::string::npos);
            ++runs;
        }
    }
    // The same URL through the environment.
    Outcome o = sqlock_test::run({cli, "--table", db.table, "-v", "list"}, {{"SQLOCK_DB", wrong}});
    CHECK((o.out + o.err).find(password) == std::string::npos);
    WARN("password checks (CLI): " << runs + 1 << " invocations, none printed the password");
}

TEST_CASE("a running `sqlock run` shows no password in /proc/PID/cmdline or the child's",
          "[cli][security][needs:server]") {
    // Needs a URL with a password.
    auto db = fresh_database();
    const std::string password = sqlock_test::password_of(db.url);
    // Not inherited from this test process either: every variable of ours
    // that carries the password (the runner's URLs) is left out, so what the
    // check below finds can only come from sqlock.
    sqlock_test::Env clean{{"SQLOCK_DB", std::nullopt}};
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        if (entry.find(password) != std::string::npos)
            clean[entry.substr(0, entry.find('='))] = std::nullopt;
    }
    sqlock_test::Process run({cli, "--db", db.url, "--table", db.table, "run", "proc-check", "--",
                              "sh", "-c", "echo started; read line"},
                             clean, spawn_options().pipe_stdin(true).pipe_stdout(true));
    REQUIRE(run.read_line() == "started");
    const std::string cmdline = read_file("/proc/" + std::to_string(run.pid()) + "/cmdline");
    INFO("cmdline: " << cmdline);
    CHECK(cmdline.find(password) == std::string::npos);
    CHECK(cmdline.find("run") != std::string::npos);  // scrubbed, not emptied
    // The command sqlock runs: its argv and environment carry no password.
    const std::string children = read_file("/proc/" + std::to_string(run.pid()) + "/task/" +
                                           std::to_string(run.pid()) + "/children");
    std::istringstream pids(children);
    std::string child;
    int seen = 0;
    while (pids >> child) {
        ++seen;
        CHECK(read_file("/proc/" + child + "/cmdline").find(password) == std::string::npos);
        CHECK(read_file("/proc/" + child + "/environ").find(password) == std::string::npos);
    }
    CHECK(seen == 1);
    run.write_line("done");
    CHECK(run.finish().code == 0);
}

TEST_CASE("`release --force` and `reap` delete exactly what they say",
          "[cli][security][needs:table_dump_sql]") {
    auto db = fresh_database();
    auto holder = db.open();
    auto job = holder.lock("job", lock_options().expires(1h));
    auto job2 = holder.lock("job2", lock_options().expires(1h));
    auto slot = holder.acquire_slot("job", 3);
    for (const char* name : {"job#2", "jo", "old-1"})
        sqlock_test::exec_sql(
            db, "INSERT INTO " + db.table + " (lockstring, created, expires, locked_by) VALUES ('" +
                    name + "', '2001-01-01 00:00:00', '2001-01-01 00:00:01', '{}')");
    auto rows_except = [&](const std::vector<std::string>& gone) {
        std::string in;
        for (const auto& g : gone) in += (in.empty() ? "'" : ", '") + g + "'";
        return reliability::query(db, "SELECT id, lockstring, created, expires, locked_by FROM " +
                                          db.table + " WHERE lockstring NOT IN (" + in +
                                          ") ORDER BY id");
    };
    const auto before_force = rows_except({"job"});

    Outcome forced = sqlock_cmd(db, {"release", "job", "--force"});
    INFO(show(forced));
    CHECK(forced.code == 0);
    CHECK(forced.err.find(std::to_string(job.id())) != std::string::npos);
    CHECK(rows_except({"job"}) == before_force);
    CHECK_FALSE(holder.show("job"));

    // Nothing to release: nothing deleted, and it says so (exit 0: a forced
    // release is idempotent).
    const std::string table_before = reliability::dump_table(db);
    Outcome absent = sqlock_cmd(db, {"release", "nothing-here", "--force"});
    INFO(show(absent));
    CHECK(absent.code == 0);
    CHECK(absent.err.find("not held") != std::string::npos);
    CHECK(reliability::dump_table(db) == table_before);

    // A dry run lists exactly the expired rows and deletes nothing.
    auto names_in = [](const std::string& json) {
        std::set<std::string> names;
        const auto doc = nlohmann::json::parse(json);
        for (const auto& lock : doc.at("locks")) names.insert(lock.at("name").get<std::string>());
        return names;
    };
    const std::set<std::string> expired = {"job#2", "jo", "old-1"};
    Outcome dry = sqlock_cmd(db, {"reap", "--dry-run", "--json"});
    INFO(show(dry));
    CHECK(dry.code == 0);
    CHECK(names_in(dry.out) == expired);
    CHECK(reliability::dump_table(db) == table_before);
    // The real run deletes those three and reports them; live rows stay.
    const auto live = rows_except({"job", "job#2", "jo", "old-1"});
    Outcome reap = sqlock_cmd(db, {"reap", "--json"});
    INFO(show(reap));
    CHECK(reap.code == 0);
    CHECK(nlohmann::json::parse(reap.out).at("count") == 3);
    CHECK(names_in(reap.out) == expired);
    CHECK(rows_except({"job", "job#2", "jo", "old-1"}) == live);
    CHECK(holder.list().size() == 2);  // job2 and job#1
    sqlock::set_release_error_handler([](const sqlock::error&) {});
    { auto gone = std::move(job); }
    sqlock::set_release_error_handler({});
}

TEST_CASE("doctor on SQLite: no file, or one this user cannot write, is a problem (exit 78)",
          "[cli][doctor][needs:embedded]") {
    // A server's access is its grants (doctor_test.cpp).
    // A directory anyone may enter: the database is read by another user.
    // In /tmp, not the scratch directory: another user must enter it.
    char dir_template[] = "/tmp/sqlock-doctor-XXXXXX";
    REQUIRE(mkdtemp(dir_template) != nullptr);
    const std::string dir = dir_template;
    struct Remove {
        std::string dir;
        ~Remove() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } remove{dir};
    REQUIRE(chmod(dir.c_str(), 0755) == 0);
    const std::string url = "sqlite://" + dir + "/locks.db";
    auto doctor = [&](const std::string& db, std::vector<std::string> prefix = {}) {
        prefix.insert(prefix.end(), {cli, "--db", db, "doctor"});
        return sqlock_test::run(prefix, {{"SQLOCK_DB", std::nullopt}}, {}, 60s);
    };

    Outcome none = doctor("sqlite://" + dir + "/none.db");
    INFO(show(none));
    CHECK(none.code == 78);
    CHECK(exactly_one_line(none.err));
    CHECK(none.err.find("problem: no lock database at") != std::string::npos);

    REQUIRE(sqlock_test::run({cli, "--db", url, "init"}, {{"SQLOCK_DB", std::nullopt}}).code == 0);
    Outcome fine = doctor(url);
    INFO(show(fine));
    CHECK(fine.code == 0);
    CHECK(fine.err.empty());

    // Read-only for the user who runs doctor: another user when this is
    // root (root may write any file), else the file's mode.
    std::vector<std::string> as_other;
    for (const char* name : {"locks.db", "locks.db-wal", "locks.db-shm"})
        chmod((dir + "/" + name).c_str(), 0644);
    if (geteuid() == 0) {
        as_other = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
        if (sqlock_test::run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                              "--clear-groups", "--", cli, "--version"},
                             {})
                .code != 0) {
            WARN("the sqlock binary cannot be run by another user here: read-only case not tried");
            return;
        }
    } else {
        REQUIRE(chmod((dir + "/locks.db").c_str(), 0444) == 0);
    }
    Outcome read_only = doctor(url, as_other);
    INFO(show(read_only));
    CHECK(read_only.code == 78);
    CHECK(exactly_one_line(read_only.err));
    CHECK(read_only.err.find("is read-only for this user") != std::string::npos);
    CHECK(read_only.out.find("the file is read-only") != std::string::npos);
}

TEST_CASE("the CLI's default database is private to the user", "[cli][security]") {
    const std::string home = sqlock_test::scratch_dir() + "/cli-home";
    REQUIRE(mkdir(home.c_str(), 0755) == 0);
    mode_t old = umask(0);
    Outcome o = sqlock_test::run(
        {cli, "acquire", "private", "--expires", "1m"},
        {{"HOME", home}, {"XDG_STATE_HOME", std::nullopt}, {"SQLOCK_DB", std::nullopt}});
    umask(old);
    INFO(show(o));
    REQUIRE(o.code == 0);
    struct stat st {};
    REQUIRE(stat((home + "/.local/state/sqlock").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    REQUIRE(stat((home + "/.local/state/sqlock/locks.db").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
}

TEST_CASE("the CLI with a least-privilege server account",
          "[cli][security][privileges][needs:server]") {
    // SQLite has no accounts.
    auto db = fresh_database();
    const sqlock_test::Database limited = sqlock_test::least_privileged(db);
    CHECK(sqlock_cmd(limited, {"run", "lp", "--", "true"}).code == 0);
    CHECK(sqlock_cmd(limited, {"acquire", "lp", "--expires", "100ms"}).code == 0);
    CHECK(sqlock_cmd(limited, {"list"}).code == 0);
    CHECK(eventually(
        [&] { return sqlock_cmd(limited, {"reap"}).code == 0 && db.open().list().empty(); }));
    sqlock_test::Database fresh{limited.url, db.table + "_new"};
    Outcome init = sqlock_cmd(fresh, {"init"});
    INFO(show(init));
    CHECK(init.code == 78);
    CHECK(exactly_one_line(init.err));
}
