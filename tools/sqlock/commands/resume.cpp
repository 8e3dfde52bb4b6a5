// sqlock resume NAME: end the pause of job NAME (`sqlock pause`), so that
// the next `sqlock run NAME` runs it.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "sqlock/pauses.hpp"

namespace sqlock_cli {
namespace {

const char* const resume_usage = "NAME";

const char* const resume_details =
    "Ends the pause of job NAME on every host: the next `sqlock run NAME` runs it.\n"
    "Exits 1 (and says so) if NAME was not paused, or its pause had already ended.\n";

int run_resume(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("resume needs exactly one job name; " +
                          usage_line("resume", resume_usage));
    const std::string& name = inv.args[0];
    sqlock::Locker locker = open_locker(inv.global);
    const std::string db = at_database(locker.url());
    if (!sqlock::Pauses(locker).resume(name))
        throw cli_error(exit_code::not_paused, "job " + in_quotes(name) + " was not paused" + db);
    inv.out.result("resumed job " + in_quotes(name) + ": the next `sqlock run` runs it" + db);
    return exit_code::ok;
}

}  // namespace

Command resume_command() {
    return {"resume",       resume_usage, "end the pause of job NAME; exits 1 if it was not paused",
            resume_details, nullptr,      run_resume};
}

}  // namespace sqlock_cli
