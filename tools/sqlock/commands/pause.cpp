// sqlock pause NAME [--for DUR] [--reason TEXT]: stop `sqlock run NAME`
// from running the job on every host (until `sqlock resume NAME`).
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "common/option_values.hpp"
#include "sqlock/pauses.hpp"

namespace sqlock_cli {
namespace {

const char* const pause_usage = "NAME [--for DUR] [--reason TEXT]";

const char* const pause_details =
    "A paused job is not run on any host: `sqlock run NAME` takes the lock, finds the\n"
    "pause, releases the lock and exits 80 without running COMMAND, with one line\n"
    "saying who paused it (user@host), when (UTC, the database's clock) and why\n"
    "(nothing with --quiet). The pause is checked under the lock, where --once-per\n"
    "decides: a run already going on is not disturbed, and every run that starts\n"
    "after the pause sees it. A paused --once-per window is not run and not marked\n"
    "done: once resumed, the window's next attempt runs it.\n"
    "\n"
    "Without --for, the job stays paused until `sqlock resume NAME`; with --for DUR\n"
    "the pause ends by itself DUR later on the database's clock. Pausing a paused job\n"
    "replaces its pause (who, why, until). `sqlock list` shows paused jobs. The pauses\n"
    "are kept in a table beside the lock table, <table>_pauses, made by `sqlock init`.\n"
    "\n"
    "Examples:\n"
    "  sqlock pause nightly-backup --for 2d --reason \"storage migration, ticket 4711\"\n"
    "  sqlock resume nightly-backup\n";

void add_pause_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("for", "End the pause by itself after DUR (database clock); default: until resumed",
        cxxopts::value<std::string>(), "DUR");
    add("reason", "Why, shown by `run` and `list` (at most 1024 bytes)",
        cxxopts::value<std::string>(), "TEXT");
}

int run_pause(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("pause needs exactly one job name; " + usage_line("pause", pause_usage));
    const std::string& name = inv.args[0];
    std::optional<sqlock::duration> for_;
    if (inv.options.count("for"))
        for_ = duration_option(inv.options, "for", duration_kind::positive);
    const std::string reason =
        inv.options.count("reason") ? inv.options["reason"].as<std::string>() : std::string();
    sqlock::Locker locker = open_locker(inv.global);
    sqlock::PauseInfo p = sqlock::Pauses(locker).pause(name, for_, reason);
    inv.out.result("paused: " + describe_pause(p) + at_database(locker.url()));
    return exit_code::ok;
}

}  // namespace

Command pause_command() {
    return {"pause",
            pause_usage,
            "pause job NAME on every host: `run NAME` does not run it (exit 80)",
            pause_details,
            add_pause_options,
            run_pause};
}

}  // namespace sqlock_cli
