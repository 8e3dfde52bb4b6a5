// The command table (as git.c's commands[]): every command, in the order
// `sqlock --help` lists them, and finding one by name.
#include "commands/commands.hpp"

#include <algorithm>

namespace sqlock_cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> list = {
        run_command(),    elect_command(), leader_command(),  acquire_command(), release_command(),
        renew_command(),  list_command(),  show_command(),    history_command(), pause_command(),
        resume_command(), check_command(), metrics_command(), reap_command(),    init_command(),
        doctor_command(), help_command(),
    };
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

std::string usage_line(const std::string& name, const std::string& usage) {
    return "usage: sqlock " + name + (usage.empty() ? "" : " " + usage);
}

}  // namespace sqlock_cli
