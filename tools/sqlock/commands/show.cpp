// sqlock show NAME: one lock, who holds it and until when (every holder of
// a shared hold); exits 1 when it is not held.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"

namespace sqlock_cli {
namespace {

const char* const show_usage = "NAME [--json]";

void add_show_options(cxxopts::Options& options, const std::string& group) {
    options.add_options(group)("json", "Print JSON (for scripts) instead of text");
}

int run_show(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("show needs exactly one lock name; " + usage_line("show", show_usage));
    const std::string& name = inv.args[0];
    sqlock::Locker locker = open_locker(inv.global);
    auto row = locker.show(name);
    if (!row && inv.options.count("json")) Output::data("null");  // parses, like the object
    if (!row) {
        const std::string db = at_database(locker.url());
        // A semaphore's rows are "name#N": point there instead of saying "free".
        auto slots = locker.list(name + "#");
        if (!slots.empty())
            inv.out.note("no lock named " + in_quotes(name) + ", but " +
                         count_of(slots.size(), "row") + " of semaphore " + in_quotes(name) +
                         ": see `sqlock list " + pasteable(name + "#") + "`" + db);
        else
            inv.out.note("lock " + in_quotes(name) + " is not held" + db);
        return exit_code::not_held;
    }
    if (row->shared_marker() && !row->expired()) {
        // Held shared: every holder, each its own row.
        const auto holders = locker.shared_holders(name);
        if (inv.options.count("json")) {
            nlohmann::ordered_json list = nlohmann::ordered_json::array();
            for (const auto& h : holders) list.push_back(lock_json(h));
            Output::data(json_text(
                {{"name", name}, {"mode", "shared"}, {"expires", row->expires}, {"holders", list}},
                true));
        } else {
            Output::data("lock " + in_quotes(name) + " is held shared by " +
                         count_of(holders.size(), "holder") + " (mode shared), until " +
                         row->expires + " UTC at the latest:\n" + lock_table(holders));
        }
        return exit_code::ok;
    }
    if (inv.options.count("json"))
        Output::data(json_text(lock_json(*row), true));
    else
        Output::data(lock_details(*row));
    // An expired row blocks nobody: the lock is not held, whatever the row
    // still says until it is reaped or taken over.
    return row->expired() ? exit_code::not_held : exit_code::ok;
}

}  // namespace

Command show_command() {
    return {"show", show_usage,       "show one lock; exits 1 if it is not held",
            "",     add_show_options, run_show};
}

}  // namespace sqlock_cli
