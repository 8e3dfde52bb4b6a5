// sqlock doctor: which path locks take to the database (host name lookups,
// server version, primary or standby, pooler, pushed or polled wake-ups,
// clock difference), and one line for each problem found in the setup.
#include <algorithm>

#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "sqlock/doctor.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

const char* const doctor_usage = "[--json]";

const char* const doctor_details =
    "Read-only: probes the database on connections of its own and changes\n"
    "nothing. Facts go to stdout; each problem found is one line on stderr,\n"
    "saying what to do. Also reports whether the run history, pauses, queue and\n"
    "leaders tables beside the lock table exist (a missing one is a problem: run\n"
    "`sqlock init`).\n"
    "Exit code 0 when no problem was found, 78 when one was, whether or not it\n"
    "stops locking (or the usual code when the database cannot be reached).\n";

void add_doctor_options(cxxopts::Options& options, const std::string& group) {
    options.add_options(group)("json", "Print JSON (for scripts) instead of text");
}

int run_doctor(Invocation& inv) {
    if (!inv.args.empty()) throw usage_error("doctor takes no arguments; usage: sqlock doctor");
    sqlock::Locker locker = open_locker(inv.global);
    const sqlock::Diagnosis d = sqlock::diagnose(locker);
    if (inv.options.count("json")) {
        nlohmann::ordered_json facts = nlohmann::ordered_json::object();
        for (const auto& f : d.facts) facts[f.key] = f.value;
        nlohmann::ordered_json json = {{"facts", facts}, {"problems", d.problems}};
        Output::data(json_text(json, true));
    } else {
        std::size_t width = 0;
        for (const auto& f : d.facts) width = std::max(width, f.key.size());
        std::string text;
        for (const auto& f : d.facts)
            text += f.key + ":" + std::string(width + 2 - f.key.size(), ' ') +
                    sqlock::text::printable_value(f.value) + "\n";
        Output::data(text);
    }
    for (const auto& p : d.problems) Output::error("problem: " + p);
    return d.problems.empty() ? exit_code::ok : exit_code::configuration;
}

}  // namespace

Command doctor_command() {
    return {"doctor",
            doctor_usage,
            "check the way to the database: server, pooler, wake-ups, clock, tables",
            doctor_details,
            add_doctor_options,
            run_doctor};
}

}  // namespace sqlock_cli
