// sqlock elect NAME [--value TEXT] [OPTIONS] -- COMMAND [ARGS...]: `run` as
// a leader. Campaigns for NAME (waiting without a time limit unless --wait
// says otherwise), publishes the value, then runs COMMAND as `run` does.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/option_values.hpp"
#include "run/run_session.hpp"
#include "run/run_settings.hpp"
#include "text.hpp"

namespace sqlock_cli {
namespace {

const char* const elect_usage = "NAME [--value TEXT] [OPTIONS] -- COMMAND [ARGS...]";

const char* const elect_details =
    "Runs COMMAND as the leader of NAME: one host at a time among those that run\n"
    "`sqlock elect NAME` for it, the others standing by until it stops leading.\n"
    "sqlock campaigns for NAME (waiting in line without a time limit, unless --wait\n"
    "says otherwise), publishes --value for everyone to read (`sqlock leader NAME`),\n"
    "and then runs COMMAND exactly as `run` does: the lease is renewed while it runs,\n"
    "the whole job is stopped before the lease could run out if renewals fail, and\n"
    "SIGTERM or SIGINT stops it. Once the job has ended, sqlock resigns: the next\n"
    "candidate in line takes over at once, without waiting for a lease to run out.\n"
    "A leader killed outright is replaced when its lease (--expires) ends.\n"
    "\n"
    "The value is UTF-8 text without control characters, at most 256 bytes (an\n"
    "address, a version); the job's environment has it as SQLOCK_LEADER_VALUE, and\n"
    "its fencing id as SQLOCK_ID, strictly increasing from one leader to the next, and\n"
    "SQLOCK_GUARD: SQL that makes its transactions commit only while it leads.\n"
    "\n"
    "elect takes run's options but for --slots, --shared and --once-per, and one name.\n"
    "A short --expires (15s to 1m) makes fail-over after a crash fast; the heartbeat\n"
    "keeps a healthy leader's lease. See docs/leader-election.md for a systemd unit\n"
    "that runs a service on several hosts with one active.\n"
    "\n"
    "Examples:\n"
    "  sqlock elect scheduler --value \"$(hostname):8080\" --expires 30s -- ./scheduler\n"
    "  sqlock elect reports --wait 0 -- ./reports   # lead now or exit 75\n";

void add_elect_options(cxxopts::Options& options, const std::string& group) {
    add_job_options(options, group, "refused by elect");
    options.add_options(group)("value",
                               "What the leader publishes for `sqlock leader` (at most 256 bytes)",
                               cxxopts::value<std::string>(), "TEXT");
}

RunSettings parse_elect_settings(const Invocation& inv) {
    const std::string line = usage_line("elect", elect_usage);
    const auto& o = inv.options;
    if (inv.args.size() > 1)
        throw usage_error("elect leads one name, got " + std::to_string(inv.args.size()) + "; " +
                          line);
    for (const char* option : {"slots", "shared", "once-per"})
        if (o.count(option))
            throw usage_error(std::string("--") + option + " does not go with elect: a leader " +
                              "holds its name alone, for as long as its job runs");
    RunSettings s = parse_run_settings(inv, "elect", line);
    // A standby waits for its turn, however long the leader leads.
    if (!o.count("wait") && !o.count("nonblock")) s.request.wait_forever = true;
    s.request.leader_value = o.count("value") ? string_option(o, "value") : std::string();
    return s;
}

int run_elect(Invocation& inv) {
    return run_guarded(inv, parse_elect_settings);
}

}  // namespace

Command elect_command() {
    return {"elect",
            elect_usage,
            "run COMMAND as the leader of NAME: one host at a time, the others standing by",
            std::string(elect_details) + "\n" + exit_code_help(),
            add_elect_options,
            run_elect,
            true};
}

}  // namespace sqlock_cli
