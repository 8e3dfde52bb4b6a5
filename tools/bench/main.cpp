// sqlock-bench: measures sqlock against raw SQL baselines in the same run, on
// SQLite, PostgreSQL and MariaDB/MySQL, and prints the ratios. See
// docs/benchmarks.md.
//
//   sqlock-bench [--quick] [--json] [--pg-url URL] [--mariadb-url URL] [--sqlock PATH]
//                [--only SECTIONS] [--backend BACKENDS]
//
// Exit status 0, or 1 if a measurement failed with an error, 2 on a bad
// command line, 130 when interrupted. Never non-zero because of a timing.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>

#include "bench_database.hpp"
#include "cli_runs.hpp"
#include "clock.hpp"
#include "interrupt.hpp"
#include "machine.hpp"
#include "options.hpp"
#include "report.hpp"
#include "sections.hpp"
#include "sqlock/config.hpp"

namespace sqlock_bench {
namespace {

// The run's private directory for SQLite files and the command's state,
// removed with everything in it when the run ends.
class ScratchDir {
  public:
    ScratchDir() {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/sqlock-bench-XXXXXX";
        if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create " + pattern);
        path_ = pattern;
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

struct Section {
    std::string name;
    std::function<void(Context&, const BackendTarget&)> run;
    bool sqlite_only = false;
};

bool selected(const std::vector<std::string>& chosen, const std::string& name) {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
}

// A database server to measure, or why not.
BackendTarget server_target(backend_kind kind, const std::string& name, const std::string& title,
                            bool built, const std::string& option, const std::string& url,
                            const std::string& flag, const std::string& variable) {
    BackendTarget t;
    t.kind = kind;
    t.name = name;
    t.location = url;
    t.shown = url.empty() ? "none" : redact_url(url);
    if (!built)
        t.skip_reason = "built without " + title + " (" + option + "=OFF)";
    else if (url.empty())
        t.skip_reason = "no " + title + " server: pass " + flag + " or set " + variable;
    return t;
}

std::vector<BackendTarget> make_targets(const Options& options, const ScratchDir& scratch) {
    std::vector<BackendTarget> targets;
    BackendTarget sqlite;
    sqlite.kind = backend_kind::sqlite;
    sqlite.name = "sqlite";
    sqlite.location = scratch.path();
    sqlite.shown = "files in " + scratch.path();
    if (!SQLOCK_WITH_SQLITE) sqlite.skip_reason = "built without SQLite (SQLOCK_WITH_SQLITE=OFF)";
    BackendTarget pg =
        server_target(backend_kind::postgresql, "postgresql", "PostgreSQL", SQLOCK_WITH_POSTGRES,
                      "SQLOCK_WITH_POSTGRES", options.pg_url, "--pg-url", "SQLOCK_TEST_PG_URL");
    BackendTarget maria = server_target(
        backend_kind::mariadb, "mariadb", "MariaDB", SQLOCK_WITH_MARIADB, "SQLOCK_WITH_MARIADB",
        options.mariadb_url, "--mariadb-url", "SQLOCK_TEST_MARIADB_URL");
    for (BackendTarget& t : {std::ref(sqlite), std::ref(pg), std::ref(maria)})
        if (selected(options.backends, t.name)) targets.push_back(t);
    return targets;
}

// Creates and drops a table once, to find out early whether the backend
// works here, and to learn the server's version.
void probe(BackendTarget& target, Report& report) {
    if (!target.usable()) return;
    try {
        BenchDatabase db(target, "probe");
        report.fact(target.name, db.raw()->server_version() + ", " + target.shown);
    } catch (const sqlock::error& e) {
        if (e.category() == sqlock::errc::configuration) {
            target.skip_reason = std::string("not usable in this build: ") + e.what();
        } else {
            report.fail("setup", target.name, scrub_password(e.what(), target.location));
            target.skip_reason = "setup failed";
        }
    } catch (const std::exception& e) {
        report.fail("setup", target.name, scrub_password(e.what(), target.location));
        target.skip_reason = "setup failed";
    }
}

int run(int argc, char** argv) {
    Options options;
    try {
        options = parse_options(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "sqlock-bench: " << e.what() << " (see --help)\n";
        return 2;
    }
    const Scale scale = scale_for(options);
    install_interrupt_handlers();
    const std::int64_t started = now_ns();
    ScratchDir scratch;
    Report report;
    describe_machine(report);
    report.fact("mode", options.quick ? "quick (--quick): shorter rounds, 10^5 rows stand in for "
                                        "10^6"
                                      : "default");
    if (options.quick)
        report.note(
            "quick mode: the 10^6-row cases (growth, reaper) use 10^5 rows, and rounds are "
            "shorter; figures are noisier than a default run's");
    std::vector<BackendTarget> targets = make_targets(options, scratch);
    for (BackendTarget& t : targets) probe(t, report);

    const std::vector<Section> sections{
        {"uncontended", bench_uncontended}, {"parallel", bench_parallel},
        {"contention", bench_contention},   {"growth", bench_growth},
        {"semaphore", bench_semaphore},     {"sets", bench_sets},
        {"reaper", bench_reaper},           {"command", bench_command, true},
        {"memory", bench_memory},           {"queue", bench_queue},
        {"leader", bench_leader},           {"guard", bench_guard},
    };
    Context ctx{options, scale, report, scratch.path()};
    bool interrupted_run = false;
    for (const Section& s : sections) {
        if (!selected(options.sections, s.name) || interrupted_run) continue;
        for (const BackendTarget& t : targets) {
            if (s.sqlite_only && t.kind != backend_kind::sqlite) continue;
            if (!t.usable()) {
                report.skip(s.name, t.name, t.skip_reason);
                continue;
            }
            if (s.name == "command" && !CliRuns::available(options)) {
                report.skip(s.name, t.name,
                            "no sqlock binary at " + options.sqlock_cli +
                                " (build the sqlock_cli target, or pass --sqlock PATH)");
                continue;
            }
            const std::int64_t t0 = now_ns();
            std::cerr << "sqlock-bench: " << s.name << " on " << t.name << " ..." << std::flush;
            try {
                s.run(ctx, t);
                std::cerr << " " << format_value(seconds_since(t0), "s") << "\n";
            } catch (const interrupted&) {
                std::cerr << " interrupted\n";
                interrupted_run = true;
                break;
            } catch (const std::exception& e) {
                std::cerr << " failed\n";
                report.fail(s.name, t.name, scrub_password(e.what(), t.location));
            }
        }
    }
    report.fact("run time", format_value(seconds_since(started), "s"));
    // With --json, stdout is JSON only; the table still goes to stderr for
    // whoever watches the run.
    if (options.json) {
        std::cerr << "\n";
        report.print_table(std::cerr);
        std::cout << report.to_json().dump(2) << "\n";
    } else {
        report.print_table(std::cout);
    }
    if (interrupted_run) return 130;
    return report.any_failed() ? 1 : 0;
}

}  // namespace
}  // namespace sqlock_bench

int main(int argc, char** argv) {
    try {
        return sqlock_bench::run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << "sqlock-bench: " << e.what() << "\n";
        return 1;
    }
}
