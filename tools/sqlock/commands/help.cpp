// sqlock help [COMMAND]: the list of commands, or one command's help (as
// `sqlock --help` and `sqlock COMMAND --help` print them).
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/exit_codes.hpp"

namespace sqlock_cli {
namespace {

const char* const help_usage = "[COMMAND]";

int run_help(Invocation& inv) {
    if (inv.args.empty()) {
        Output::data(general_help());
        return exit_code::ok;
    }
    if (inv.args.size() > 1) throw usage_error(usage_line("help", help_usage));
    const Command* command = find_command(inv.args[0]);
    if (!command)
        throw usage_error("unknown command " + in_quotes(inv.args[0]) + did_you_mean(inv.args[0]) +
                          "; see `sqlock --help` for the list");
    Output::data(command_help(*command));
    return exit_code::ok;
}

}  // namespace

Command help_command() {
    return {"help", help_usage, "show help for COMMAND", "", nullptr, run_help};
}

}  // namespace sqlock_cli
