// sqlock list [PREFIX]: what is held, by whom, until when, and the paused jobs.
#include "commands/commands.hpp"
#include "common/command_line.hpp"
#include "common/database.hpp"
#include "common/exit_codes.hpp"
#include "common/lock_format.hpp"
#include "sqlock/pauses.hpp"

namespace sqlock_cli {
namespace {

const char* const list_usage = "[PREFIX] [--held | --expired] [--json]";

void add_list_options(cxxopts::Options& options, const std::string& group) {
    auto add = options.add_options(group);
    add("held", "Only locks that are held (their lease has not run out)");
    add("expired", "Only expired rows (they block nobody; `sqlock reap` deletes them)");
    add("json", "Print JSON (for scripts) instead of text");
}

int run_list(Invocation& inv) {
    if (inv.args.size() > 1)
        throw usage_error("list takes at most one prefix; " + usage_line("list", list_usage));
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
        for (auto& p : sqlock::Pauses(locker).all())
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

}  // namespace

Command list_command() {
    return {"list", list_usage,       "list the locks (whose names start with PREFIX)",
            "",     add_list_options, run_list};
}

}  // namespace sqlock_cli
