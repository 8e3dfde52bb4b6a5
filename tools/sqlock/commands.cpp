// The command registry, and `sqlock help [COMMAND]`.
#include "commands.hpp"

#include "command_line.hpp"
#include "exit_codes.hpp"

namespace sqlock_cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> list = [] {
        std::vector<Command> c;
        c.push_back(
            {"run", "NAME [OPTIONS] -- COMMAND [ARGS...]", "run COMMAND while holding lock NAME",
             std::string(run_details) + "\n" + exit_code_help(), add_run_options, run_run, true});
        c.push_back({"acquire", "NAME [--expires DUR] [--wait DUR] [--slots N] [--json]",
                     "take lock NAME and leave it held (maintenance windows)", acquire_details,
                     add_acquire_options, run_acquire, false});
        c.push_back({"release", "NAME [--token TOKEN | --force]",
                     "release a lock by its owner token, or anyone's with --force", release_details,
                     add_release_options, run_release, false});
        c.push_back({"list", "[PREFIX] [--json]", "list the locks (whose names start with PREFIX)",
                     "", add_list_options, run_list, false});
        c.push_back({"show", "NAME [--json]", "show one lock; exits 1 if it is not held", "",
                     add_list_options, run_show, false});
        c.push_back({"reap", "[--dry-run] [--json]", "delete expired locks (cron-safe)",
                     reap_details, add_reap_options, run_reap, false});
        c.push_back(
            {"init", "", "create the lock table (idempotent)", "", nullptr, run_init, false});
        c.push_back({"doctor", "[--json]",
                     "check the way to the database: server, pooler, wake-ups, clock",
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

int run_help(Invocation& inv) {
    if (inv.args.empty()) {
        Output::data(general_help());
        return exit_code::ok;
    }
    if (inv.args.size() > 1) throw usage_error("usage: sqlock help [COMMAND]");
    const Command* command = find_command(inv.args[0]);
    if (!command)
        throw usage_error("unknown command " + in_quotes(inv.args[0]) +
                          "; see `sqlock --help` for the list");
    Output::data(command_help(*command));
    return exit_code::ok;
}

}  // namespace sqlock_cli
