// sqlock list [PREFIX] and sqlock show NAME: what is held, by whom, until when.
#include "command_line.hpp"
#include "commands.hpp"
#include "database.hpp"
#include "exit_codes.hpp"
#include "lock_format.hpp"

namespace sqlock_cli {

void add_list_options(cxxopts::Options& options, const std::string& group) {
    options.add_options(group)("json", "Print JSON (for scripts) instead of text");
}

int run_list(Invocation& inv) {
    if (inv.args.size() > 1)
        throw usage_error("list takes at most one prefix; usage: sqlock list [PREFIX] [--json]");
    const std::string prefix = inv.args.empty() ? "" : inv.args[0];
    sqlock::Locker locker = open_locker(inv.global);
    const auto rows = locker.list(prefix);
    if (inv.options.count("json")) {
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        for (const auto& row : rows) array.push_back(lock_json(row));
        Output::data(json_text(array, true));
    } else if (rows.empty()) {
        inv.out.result("no locks" + (prefix.empty() ? "" : " starting with " + in_quotes(prefix)) +
                       at_database(locker.url()));
    } else {
        Output::data(lock_table(rows));
    }
    return exit_code::ok;
}

int run_show(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("show needs exactly one lock name; usage: sqlock show NAME [--json]");
    const std::string& name = inv.args[0];
    sqlock::Locker locker = open_locker(inv.global);
    auto row = locker.show(name);
    if (!row) {
        const std::string db = at_database(locker.url());
        // A semaphore's rows are "name#N": point there instead of saying "free".
        auto slots = locker.list(name + "#");
        if (!slots.empty())
            inv.out.note("no lock named " + in_quotes(name) + ", but " +
                         std::to_string(slots.size()) + " row(s) of semaphore " + in_quotes(name) +
                         ": see `sqlock list '" + terminal_safe(name) + "#'`" + db);
        else
            inv.out.note("lock " + in_quotes(name) + " is not held" + db);
        return exit_code::not_held;
    }
    if (inv.options.count("json"))
        Output::data(json_text(lock_json(*row), true));
    else
        Output::data(lock_details(*row));
    return exit_code::ok;
}

}  // namespace sqlock_cli
