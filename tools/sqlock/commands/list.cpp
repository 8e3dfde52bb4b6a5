// sqlock list [PREFIX] and sqlock show NAME: what is held, by whom, until when.
#include "common/command_line.hpp"
#include "common/commands.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"

namespace sqlock_cli {

void add_list_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("held", "Only locks that are held (their lease has not run out)");
    add("expired", "Only expired rows (they block nobody; `sqlock reap` deletes them)");
    add("json", "Print JSON (for scripts) instead of text");
}

void add_show_options(cxxopts::Options& options, const std::string& group) {
    options.add_options(group)("json", "Print JSON (for scripts) instead of text");
}

int run_list(Invocation& inv) {
    const std::string usage = "usage: sqlock list [PREFIX] [--held | --expired] [--json]";
    if (inv.args.size() > 1) throw usage_error("list takes at most one prefix; " + usage);
    const bool held = inv.options.count("held") > 0, expired = inv.options.count("expired") > 0;
    if (held && expired) throw usage_error("--held and --expired contradict each other");
    const std::string prefix = inv.args.empty() ? "" : inv.args[0];
    sqlock::Locker locker = open_locker(inv.global);
    auto rows = locker.list(prefix);
    if (held || expired) {
        std::vector<sqlock::LockInfo> kept;
        for (auto& row : rows)
            if (row.expired() == expired) kept.push_back(std::move(row));
        rows = std::move(kept);
    }
    // Paused jobs whose name starts with PREFIX; not with --held/--expired,
    // which ask about lock rows only.
    std::vector<sqlock::PauseInfo> pauses;
    if (!held && !expired)
        for (auto& p : locker.pauses())
            if (p.name.compare(0, prefix.size(), prefix) == 0) pauses.push_back(std::move(p));
    auto pause_of = [&](const std::string& row_name) -> const sqlock::PauseInfo* {
        for (const auto& p : pauses)
            if (row_name == p.name || row_name.rfind(p.name + "#", 0) == 0) return &p;
        return nullptr;
    };
    if (inv.options.count("json")) {
        // Lock objects as before, each with "paused" (null or the pause);
        // a paused job without a lock row is an object of "name" and
        // "paused" only.
        nlohmann::ordered_json array = nlohmann::ordered_json::array();
        std::vector<bool> shown(pauses.size(), false);
        for (const auto& row : rows) {
            nlohmann::ordered_json j = lock_json(row);
            const sqlock::PauseInfo* p = pause_of(row.name);
            j["paused"] = p ? pause_json(*p) : nlohmann::ordered_json(nullptr);
            if (p) shown[static_cast<std::size_t>(p - pauses.data())] = true;
            array.push_back(std::move(j));
        }
        for (std::size_t i = 0; i < pauses.size(); ++i)
            if (!shown[i])
                array.push_back({{"name", pauses[i].name}, {"paused", pause_json(pauses[i])}});
        Output::data(json_text(array, true));
    } else if (rows.empty() && !pauses.empty()) {
        Output::data(pause_table(pauses));
    } else if (rows.empty()) {
        inv.out.result(std::string(held      ? "no held locks"
                                   : expired ? "no expired locks"
                                             : "no locks") +
                       (prefix.empty() ? "" : " starting with " + in_quotes(prefix)) +
                       at_database(locker.url()));
    } else {
        Output::data(lock_table(rows));
        if (!pauses.empty()) Output::data("\n" + pause_table(pauses));
    }
    return exit_code::ok;
}

int run_show(Invocation& inv) {
    if (inv.args.size() != 1)
        throw usage_error("show needs exactly one lock name; usage: sqlock show NAME [--json]");
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

}  // namespace sqlock_cli
