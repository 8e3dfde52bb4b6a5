// sqlock-bench: measures sqlock against raw SQL baselines in the same run, on
// every backend, and prints the ratios. See docs/benchmarks.md. What it
// knows of each backend comes from the backend's folder (bench_backend.hpp).
//
//   sqlock-bench [--quick] [--json] [--<backend option> VALUE ...] [--sqlock PATH]
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
    bool default_database_only = false;  // the command's default database
};

bool selected(const std::vector<std::string>& chosen, const std::string& name) {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
}

// A backend to measure, or why not: a server's is its URL option's server,
// an embedded one's files go to the run's scratch directory.
BackendTarget make_target(const BenchBackend& backend, const Options& options,
                          const ScratchDir& scratch) {
    BackendTarget t;
    t.backend = &backend;
    t.name = backend.name;
    if (backend.server) {
        const BenchOption& url_option = backend.options.front();
        t.location = options.backend_options[url_option.name];
        t.shown = t.location.empty() ? "none" : redact_url(t.location);
        if (backend.hooks && t.location.empty())
            t.skip_reason = "no " + backend.title + " server: pass --" + url_option.name +
                            " or set " + url_option.variable;
    } else {
        t.location = scratch.path();
        t.shown = "files in " + scratch.path();
    }
    if (!backend.hooks)
        t.skip_reason = "built without " + backend.title + " (" + backend.build_option + "=OFF)";
    return t;
}

std::vector<BackendTarget> make_targets(const Options& options, const ScratchDir& scratch) {
    std::vector<BackendTarget> targets;
    for (const BenchBackend& backend : bench_backends())
        if (selected(options.backends, backend.name))
            targets.push_back(make_target(backend, options, scratch));
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
            if (s.default_database_only && !t.backend->default_database) continue;
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
