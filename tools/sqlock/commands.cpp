// The command registry, and `sqlock help [COMMAND]`.
#include "commands.hpp"

#include <algorithm>

#include "command_line.hpp"
#include "exit_codes.hpp"

namespace sqlock_cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> list = [] {
        std::vector<Command> c;
        c.push_back({"run", "NAME [NAME...] [OPTIONS] -- COMMAND [ARGS...]",
                     "run COMMAND while holding lock NAME (several: all at once)",
                     std::string(run_details) + "\n" + exit_code_help(), add_run_options, run_run,
                     true});
        c.push_back(
            {"elect", "NAME [--value TEXT] [OPTIONS] -- COMMAND [ARGS...]",
             "run COMMAND as the leader of NAME: one host at a time, the others standing by",
             std::string(elect_details) + "\n" + exit_code_help(), add_elect_options, run_elect,
             true});
        c.push_back({"leader", "NAME [--watch] [--json]",
                     "show who leads NAME; with --watch, each change; exits 1 if nobody leads",
                     leader_details, add_leader_options, run_leader, false});
        c.push_back({"acquire", "NAME [NAME...] [--expires DUR] [--wait DUR] [--slots N] [--json]",
                     "take lock NAME and leave it held (maintenance windows)", acquire_details,
                     add_acquire_options, run_acquire, false});
        c.push_back({"release", "NAME [NAME...] [--token TOKEN | --force]",
                     "release a lock by its owner token, or anyone's with --force", release_details,
                     add_release_options, run_release, false});
        c.push_back({"renew", "NAME [--token TOKEN] [--expires DUR]",
                     "extend the lease of a lock taken with `acquire`", renew_details,
                     add_renew_options, run_renew, false});
        c.push_back({"list", "[PREFIX] [--held | --expired] [--json]",
                     "list the locks (whose names start with PREFIX)", "", add_list_options,
                     run_list, false});
        c.push_back({"show", "NAME [--json]", "show one lock; exits 1 if it is not held", "",
                     add_show_options, run_show, false});
        c.push_back({"history", "[NAME] [--since DUR] [--limit N] [--json]",
                     "show the runs `run` recorded, newest first", history_details,
                     add_history_options, run_history, false});
        c.push_back({"pause", "NAME [--for DUR] [--reason TEXT]",
                     "pause job NAME on every host: `run NAME` does not run it (exit 80)",
                     pause_details, add_pause_options, run_pause, false});
        c.push_back({"resume", "NAME", "end the pause of job NAME; exits 1 if it was not paused",
                     resume_details, nullptr, run_resume, false});
        c.push_back({"check", "NAME --max-age DUR [--json]",
                     "monitoring plugin: did NAME's last run succeed within DUR? (exit 0-3)",
                     check_details, add_check_options, run_check, false, report_check_failure});
        c.push_back({"metrics", "[--max-names N]",
                     "the locks and the run history in the Prometheus text format", metrics_details,
                     add_metrics_options, run_metrics, false});
        c.push_back({"reap", "[--dry-run] [--history-retention DUR] [--json]",
                     "delete expired locks, old run history and ended pauses (cron-safe)",
                     reap_details, add_reap_options, run_reap, false});
        c.push_back(
            {"init", "", "create the lock table (idempotent)", "", nullptr, run_init, false});
        c.push_back({"doctor", "[--json]",
                     "check the way to the database: server, pooler, wake-ups, clock, tables",
                     doctor_details, add_doctor_options, run_doctor, false});
        c.push_back({"help", "[COMMAND]", "show help for COMMAND", "", nullptr, run_help, false});
        return c;
    }();
    return list;
}

const Command* find_command(const std::string& name) {
    for (const Command& c : commands())
        if (c.name == name) return &c;
    return nullptr;
}

namespace {

// Edits (insert, delete, substitute, swap of neighbours) from a to b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& word) {
    if (word.size() > 64) return "";  // not a typo of a command
    const Command* best = nullptr;
    std::size_t best_distance = 3;  // more than two edits: no suggestion
    for (const Command& c : commands()) {
        std::size_t d = edit_distance(word, c.name);
        if (d < best_distance) {
            best = &c;
            best_distance = d;
        }
    }
    // A short word is two edits from almost anything: demand closeness.
    if (!best || (word.size() <= 3 && best_distance > 1)) return "";
    return " (did you mean `sqlock " + best->name + "`?)";
}

int run_help(Invocation& inv) {
    if (inv.args.empty()) {
        Output::data(general_help());
        return exit_code::ok;
    }
    if (inv.args.size() > 1) throw usage_error("usage: sqlock help [COMMAND]");
    const Command* command = find_command(inv.args[0]);
    if (!command)
        throw usage_error("unknown command " + in_quotes(inv.args[0]) + did_you_mean(inv.args[0]) +
                          "; see `sqlock --help` for the list");
    Output::data(command_help(*command));
    return exit_code::ok;
}

}  // namespace sqlock_cli
