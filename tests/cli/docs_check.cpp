#include "docs_check.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "common/command.hpp"
#include "common/command_line.hpp"

namespace sqlock_docs {
namespace {

// ---- the options, from the command's own definitions ----

// The value of the first "default X" (or "default: X") of a help text
// whose X is a value: a number or duration ("10s"), or "$VARIABLE". Not
// "default: the lock's --expires", which says where the value comes from.
std::string prose_default(const std::string& help) {
    static const std::regex pattern(R"([Dd]efault:? `?(\$?[0-9A-Za-z_.]+))");
    for (auto it = std::sregex_iterator(help.begin(), help.end(), pattern);
         it != std::sregex_iterator(); ++it) {
        const std::string value = (*it)[1];
        if (std::isdigit(static_cast<unsigned char>(value[0])) || value[0] == '$') return value;
    }
    return "";
}

OptionSpec option_spec(const cxxopts::HelpOptionDetails& o) {
    OptionSpec spec;
    if (!o.s.empty()) spec.names.push_back("-" + o.s);
    for (const std::string& l : o.l) spec.names.push_back("--" + l);
    if (!o.is_boolean) {
        spec.arg = o.arg_help;
        spec.default_value = o.has_default ? o.default_value : prose_default(o.desc);
    }
    return spec;
}

std::vector<OptionSpec> group_options(const cxxopts::Options& options, const std::string& group) {
    std::vector<OptionSpec> specs;
    const auto groups = options.groups();
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) return specs;
    for (const auto& o : options.group_help(group).options) specs.push_back(option_spec(o));
    return specs;
}

// ---- reading what a text says of options ----

// An option named in a text, and the word in capitals after it, if any
// ("--expires DUR", "--after NAME[,NAME...]", "--on-lost=ACTION").
struct Mention {
    std::string name;
    std::string arg;
};

std::vector<Mention> mentions(const std::string& text) {
    static const std::regex pattern(
        R"((?:^|[^A-Za-z0-9_\-])(--?[A-Za-z][A-Za-z0-9\-]*)(?:[ =]([A-Z][A-Z0-9_]*)(?![a-z]))?)");
    std::vector<Mention> found;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it)
        found.push_back({(*it)[1], (*it)[2]});
    return found;
}

bool named(const OptionSpec& o, const std::string& name) {
    return std::find(o.names.begin(), o.names.end(), name) != o.names.end();
}

const OptionSpec* find_option(const std::vector<OptionSpec>& options, const std::string& name) {
    for (const OptionSpec& o : options)
        if (named(o, name)) return &o;
    return nullptr;
}

// The name `--help` shows it by: its first long name (--wait of -w,
// --wait, --timeout).
std::string first_name(const OptionSpec& o) {
    for (const std::string& name : o.names)
        if (name.rfind("--", 0) == 0) return name;
    return o.names.front();
}

// Every option `options` holds appears in `text` by each of its names, and
// one that takes a value at least once in the whole `document` with its
// argument's name (elect's --expires is shown with DUR among run's).
void require_documented(const std::vector<OptionSpec>& options, const std::string& text,
                        const std::string& document, const std::string& where,
                        std::vector<std::string>& problems) {
    const std::vector<Mention> said = mentions(text);
    const std::vector<Mention> anywhere = mentions(document);
    for (const OptionSpec& o : options) {
        for (const std::string& name : o.names) {
            const bool found = std::any_of(said.begin(), said.end(),
                                           [&](const Mention& m) { return m.name == name; });
            if (!found) problems.push_back(where + ": " + name + " is not documented");
        }
        if (o.arg.empty()) continue;
        const bool with_arg = std::any_of(anywhere.begin(), anywhere.end(), [&](const Mention& m) {
            return named(o, m.name) && m.arg == o.arg;
        });
        if (!with_arg)
            problems.push_back(where + ": " + first_name(o) +
                               " is never shown with its argument, " + first_name(o) + " " + o.arg);
    }
}

// What `text` lists (a synopsis, an entry's tag, a table's first cell)
// are options of `own` or `global` alone.
void require_listed_only(const std::vector<OptionSpec>& own, const std::vector<OptionSpec>& global,
                         const std::string& text, const std::string& where,
                         std::vector<std::string>& problems) {
    for (const Mention& m : mentions(text))
        if (!find_option(own, m.name) && !find_option(global, m.name))
            problems.push_back(where + " lists " + m.name + ", which it does not have");
}

// Wherever an option that some command has is followed by a word in
// capitals, that word is its argument's name there.
void require_argument_names(const CliSpec& cli, const std::string& text, const std::string& where,
                            std::vector<std::string>& problems) {
    std::map<std::string, std::set<std::string>> args;  // name -> what it takes ("" a flag)
    auto note = [&](const std::vector<OptionSpec>& options) {
        for (const OptionSpec& o : options)
            for (const std::string& name : o.names) args[name].insert(o.arg);
    };
    note(cli.global);
    note(cli.top_level);
    for (const CommandSpec& c : cli.commands) note(c.options);
    std::set<std::string> said;
    for (const Mention& m : mentions(text)) {
        auto known = args.find(m.name);
        if (m.arg.empty() || known == args.end() || known->second.count(m.arg)) continue;
        std::string expected;
        for (const std::string& a : known->second)
            expected +=
                (expected.empty() ? "" : " or ") + (a.empty() ? "a flag" : m.name + " " + a);
        const std::string problem =
            where + " shows " + m.name + " " + m.arg + ", but the option is " + expected;
        if (said.insert(problem).second) problems.push_back(problem);
    }
}

// The default that `text` states for the options it is about ("default
// 1h", "(default: `sqlock_locks`"), against the command's. Where it says
// "default" more than once ("text (the default: ...). Default:
// $SQLOCK_LOG_FORMAT"), one of them must be the command's.
void require_default(const std::vector<OptionSpec>& options, const std::string& about,
                     const std::string& text, const std::string& where,
                     std::vector<std::string>& problems) {
    static const std::regex pattern(R"([Dd]efault:? `?([^\s`,;)]+))");
    std::vector<std::string> stated;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it) {
        std::string value = (*it)[1];
        while (!value.empty() && (value.back() == '.' || value.back() == ':')) value.pop_back();
        stated.push_back(value);
    }
    if (stated.empty()) return;
    for (const Mention& subject : mentions(about)) {
        const OptionSpec* o = find_option(options, subject.name);
        if (!o || o->default_value.empty() ||
            std::find(stated.begin(), stated.end(), o->default_value) != stated.end())
            continue;
        problems.push_back(where + ": " + subject.name + " has the default " + o->default_value +
                           ", but the doc says " + stated.front());
    }
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// ---- the man page, from its roff source ----

struct ManEntry {
    std::string tag;   // the line after .TP
    std::string body;  // until the next .TP, .PP or section
};

struct ManSection {
    std::string title;
    std::string text;  // all of it, entries included
    std::vector<ManEntry> entries;
};

// Roff escapes as the reader sees them: fonts dropped, \- a hyphen.
std::string unescape_roff(const std::string& line) {
    static const std::regex font(R"(\\f(\[[^\]]*\]|\(..|.))");
    std::string s = std::regex_replace(line, font, "");
    const std::pair<const char*, const char*> escapes[] = {
        {"\\-", "-"}, {"\\%", ""},  {"\\(aq", "'"}, {"\\(em", "-"}, {"\\(en", "-"},
        {"\\&", ""},  {"\\ ", " "}, {"\\|", ""},    {"\\^", ""},    {"\\e", "\\"}};
    for (const auto& [from, to] : escapes) {
        for (std::size_t at = s.find(from); at != std::string::npos;
             at = s.find(from, at + std::string(to).size()))
            s.replace(at, std::string(from).size(), to);
    }
    return s;
}

// A macro's arguments: words, or "quoted words".
std::vector<std::string> macro_args(const std::string& text) {
    std::vector<std::string> args;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        if (i >= text.size()) break;
        std::string arg;
        if (text[i] == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i) arg += text[i];
            ++i;
        } else {
            for (; i < text.size() && text[i] != ' '; ++i) arg += text[i];
        }
        args.push_back(arg);
    }
    return args;
}

std::vector<ManSection> read_man(const std::string& roff) {
    std::vector<ManSection> sections(1);
    enum class at { text, tag, body } where = at::text;
    for (const std::string& raw : lines_of(roff)) {
        if (raw.rfind(".\\\"", 0) == 0) continue;  // a comment
        std::string line = raw;
        if (!raw.empty() && raw[0] == '.') {
            const std::size_t space = raw.find(' ');
            const std::string macro = raw.substr(1, space == std::string::npos ? space : space - 1);
            const std::vector<std::string> args =
                macro_args(space == std::string::npos ? "" : raw.substr(space + 1));
            std::string joined;
            const bool alternating = macro.size() == 2 &&
                                     std::string("BIR").find(macro[0]) != std::string::npos &&
                                     std::string("BIR").find(macro[1]) != std::string::npos;
            for (const std::string& a : args)
                joined += (joined.empty() || alternating ? "" : " ") + a;
            if (macro == "SH" || macro == "SS") {
                sections.push_back({unescape_roff(joined), "", {}});
                where = at::text;
                continue;
            }
            if (macro == "TP") {
                where = at::tag;
                continue;
            }
            if (macro == "PP" || macro == "P" || macro == "LP") {
                where = at::text;
                continue;
            }
            if (macro != "B" && macro != "I" && !alternating) continue;  // layout only
            line = joined;
        }
        line = unescape_roff(line);
        ManSection& section = sections.back();
        section.text += line + "\n";
        if (where == at::tag) {
            section.entries.push_back({line, ""});
            where = at::body;
        } else if (where == at::body) {
            section.entries.back().body += line + "\n";
        }
    }
    return sections;
}

const ManSection* man_section(const std::vector<ManSection>& sections, const std::string& title) {
    for (const ManSection& s : sections)
        if (s.title == title) return &s;
    return nullptr;
}

// ---- docs/cli.md ----

struct MdSection {
    std::string heading;  // the "## " line, without the marks
    std::string body;
};

std::vector<MdSection> read_md(const std::string& markdown) {
    std::vector<MdSection> sections(1);
    for (const std::string& line : lines_of(markdown)) {
        if (line.rfind("## ", 0) == 0)
            sections.push_back({line.substr(3), ""});
        else
            sections.back().body += line + "\n";
    }
    return sections;
}

// The text in code: `spans` and ``` fenced blocks ```, one piece each.
std::vector<std::string> code_of(const std::string& markdown) {
    std::vector<std::string> code;
    bool fenced = false;
    std::string block;
    for (const std::string& line : lines_of(markdown)) {
        if (line.rfind("```", 0) == 0) {
            if (fenced) code.push_back(block);
            block.clear();
            fenced = !fenced;
            continue;
        }
        if (fenced) {
            block += line + "\n";
            continue;
        }
        for (std::size_t open = line.find('`'); open != std::string::npos;) {
            const std::size_t close = line.find('`', open + 1);
            if (close == std::string::npos) break;
            code.push_back(line.substr(open + 1, close - open - 1));
            open = line.find('`', close + 1);
        }
    }
    return code;
}

std::string joined_code(const std::string& markdown) {
    std::string text;
    for (const std::string& piece : code_of(markdown)) text += piece + "\n";
    return text;
}

// A table's rows, each split into its cells ("\|" is a | inside a cell).
std::vector<std::vector<std::string>> table_rows(const std::string& markdown,
                                                 std::vector<std::string>* header_of_each) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header;
    bool in_table = false;
    for (const std::string& line : lines_of(markdown)) {
        if (line.empty() || line[0] != '|') {
            in_table = false;
            continue;
        }
        std::vector<std::string> cells;
        std::string cell;
        for (std::size_t i = 1; i < line.size(); ++i) {
            if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
                cell += '|';
                ++i;
            } else if (line[i] == '|') {
                cells.push_back(cell);
                cell.clear();
            } else {
                cell += line[i];
            }
        }
        if (!in_table) {
            header = cells;
            in_table = true;
            continue;
        }
        if (!cells.empty() && cells[0].find("---") != std::string::npos) continue;
        rows.push_back(cells);
        if (header_of_each) {
            std::string h;
            for (const std::string& c : header) h += c + "|";
            header_of_each->push_back(h);
        }
    }
    return rows;
}

// The defaults the table rows of `markdown` state for `options`: the
// "default" column where the table has one, else a "default X" in the row.
void require_table_defaults(const std::vector<OptionSpec>& options, const std::string& markdown,
                            const std::string& where, std::vector<std::string>& problems) {
    std::vector<std::string> headers;
    const auto rows = table_rows(markdown, &headers);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto& cells = rows[r];
        if (cells.size() < 2) continue;
        std::vector<std::string> header_cells;
        std::istringstream h(headers[r]);
        for (std::string c; std::getline(h, c, '|');) header_cells.push_back(c);
        std::string stated;
        for (std::size_t i = 1; i < cells.size() && i < header_cells.size(); ++i)
            if (header_cells[i].find("default") != std::string::npos) stated = cells[i];
        if (!stated.empty()) {
            const auto code = code_of(stated);
            stated = "default " + (code.empty() ? stated : code.front());
        } else {
            for (std::size_t i = 1; i < cells.size(); ++i) stated += cells[i] + " ";
        }
        require_default(options, joined_code(cells[0]), stated, where, problems);
    }
}

bool names_command(const std::string& heading, const std::string& command) {
    for (const std::string& span : code_of(heading))
        if (span == "sqlock " + command || span.rfind("sqlock " + command + " ", 0) == 0)
            return true;
    return false;
}

// ---- the bash completion ----

std::set<std::string> words(const std::string& text) {
    std::set<std::string> found;
    std::istringstream in(text);
    for (std::string w; in >> w;) found.insert(w);
    return found;
}

std::set<std::string> all_names(const std::vector<OptionSpec>& options, bool values_only) {
    std::set<std::string> names;
    for (const OptionSpec& o : options)
        if (!values_only || !o.arg.empty()) names.insert(o.names.begin(), o.names.end());
    return names;
}

std::string listed(const std::set<std::string>& names) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "" : " ") + n;
    return text;
}

// The lines of a shell script with their continuations (a trailing \) joined.
std::vector<std::string> shell_lines(const std::string& script) {
    std::vector<std::string> lines;
    std::string pending;
    for (const std::string& line : lines_of(script)) {
        if (!line.empty() && line.back() == '\\') {
            pending += line.substr(0, line.size() - 1) + " ";
            continue;
        }
        lines.push_back(pending + line);
        pending.clear();
    }
    return lines;
}

}  // namespace

CliSpec cli_spec() {
    CliSpec cli;
    for (const sqlock_cli::Command& c : sqlock_cli::commands()) {
        const cxxopts::Options options = sqlock_cli::make_options(&c);
        cli.commands.push_back(
            {c.name, c.usage, c.details, c.takes_command, group_options(options, c.name)});
        if (cli.global.empty()) cli.global = group_options(options, "global");
    }
    for (const OptionSpec& o : group_options(sqlock_cli::make_options(nullptr), "global"))
        if (!find_option(cli.global, o.names.back())) cli.top_level.push_back(o);
    return cli;
}

std::vector<std::string> check_help(const CliSpec& cli) {
    std::vector<std::string> problems;
    for (const CommandSpec& c : cli.commands) {
        const std::string who = "`sqlock " + c.name + "`";
        require_listed_only(c.options, cli.global, c.usage, who + "'s usage line", problems);
        require_argument_names(cli, c.usage, who + "'s usage line", problems);
        require_argument_names(cli, c.details, who + "'s help", problems);
    }
    return problems;
}

std::vector<std::string> check_man_page(const CliSpec& cli, const std::string& roff) {
    std::vector<std::string> problems;
    const std::vector<ManSection> sections = read_man(roff);
    std::string all;
    for (const ManSection& s : sections) all += s.title + "\n" + s.text;
    const ManSection* commands = man_section(sections, "COMMANDS");
    if (!commands) return {"man page: no COMMANDS section"};
    for (const CommandSpec& c : cli.commands) {
        const std::string who = "man page, `sqlock " + c.name + "`";
        const ManEntry* entry = nullptr;
        for (const ManEntry& e : commands->entries)
            if (e.tag == c.name || e.tag.rfind(c.name + " ", 0) == 0) entry = &e;
        if (!entry) {
            problems.push_back(who + ": no entry under COMMANDS");
            continue;
        }
        std::string text = entry->tag + "\n" + entry->body;
        std::string lists = entry->tag + "\n";
        if (const ManSection* own = man_section(sections, upper(c.name) + " OPTIONS")) {
            text += own->text;
            for (const ManEntry& e : own->entries) {
                lists += e.tag + "\n";
                require_default(c.options, e.tag, e.body, who, problems);
            }
        }
        require_documented(c.options, text, all, who, problems);
        require_listed_only(c.options, cli.global, lists, who, problems);
    }
    std::vector<OptionSpec> global = cli.global;
    global.insert(global.end(), cli.top_level.begin(), cli.top_level.end());
    if (const ManSection* section = man_section(sections, "GLOBAL OPTIONS")) {
        require_documented(global, section->text, all, "man page, GLOBAL OPTIONS", problems);
        for (const ManEntry& e : section->entries) {
            require_listed_only({}, global, e.tag, "man page, GLOBAL OPTIONS", problems);
            require_default(global, e.tag, e.body, "man page, GLOBAL OPTIONS", problems);
        }
    } else {
        problems.push_back("man page: no GLOBAL OPTIONS section");
    }
    require_argument_names(cli, all, "man page", problems);
    return problems;
}

std::vector<std::string> check_cli_md(const CliSpec& cli, const std::string& markdown) {
    std::vector<std::string> problems;
    const std::vector<MdSection> sections = read_md(markdown);
    const std::string code = joined_code(markdown);
    // Before the first command's section: the command line in general and
    // the global options (`help` is there too).
    std::string global_text;
    for (const MdSection& s : sections) {
        bool command_section = false;
        for (const CommandSpec& c : cli.commands)
            command_section |= names_command(s.heading, c.name);
        if (command_section) break;
        global_text += s.heading + "\n" + s.body;
    }
    for (const CommandSpec& c : cli.commands) {
        const std::string who = "docs/cli.md, `sqlock " + c.name + "`";
        std::string text;
        std::string lists;
        for (const MdSection& s : sections) {
            if (!names_command(s.heading, c.name)) continue;
            text += s.heading + "\n" + s.body;
            for (const std::string& span : code_of(s.heading))
                if (span.rfind("sqlock " + c.name, 0) == 0) lists += span + "\n";
            for (const auto& row : table_rows(s.body, nullptr))
                if (!row.empty()) lists += joined_code(row[0]);
        }
        if (text.empty()) {
            if (c.name == "help" && global_text.find("sqlock help") != std::string::npos) continue;
            problems.push_back(who + ": no section");
            continue;
        }
        require_documented(c.options, joined_code(text), code, who, problems);
        require_listed_only(c.options, cli.global, lists, who, problems);
        require_table_defaults(c.options, text, who, problems);
    }
    std::vector<OptionSpec> global = cli.global;
    global.insert(global.end(), cli.top_level.begin(), cli.top_level.end());
    const std::string where = "docs/cli.md, the global options";
    require_documented(global, joined_code(global_text), code, where, problems);
    for (const auto& row : table_rows(global_text, nullptr))
        if (!row.empty()) require_listed_only({}, global, joined_code(row[0]), where, problems);
    require_table_defaults(global, global_text, where, problems);
    require_argument_names(cli, code, "docs/cli.md", problems);
    return problems;
}

std::vector<std::string> check_completion(const CliSpec& cli, const std::string& bash) {
    std::vector<std::string> problems;
    const std::string where = "bash completion";
    std::set<std::string> command_names;
    for (const CommandSpec& c : cli.commands) command_names.insert(c.name);
    static const std::regex list_line(R"re(^\s*local (commands|global)="([^"]*)")re");
    static const std::regex pattern_line(R"(^\s*(-[-A-Za-z0-9]*(?:\s*\|\s*-[-A-Za-z0-9]*)*)\))");
    std::map<std::string, std::set<std::string>> offered;  // command -> its options' words
    std::set<std::string> listed_commands, global, takes_value, skipped_in_loop;
    bool in_prev_case = false;
    // An entry's options="..." may span lines: read the whole script as one
    // text for those, and line by line for the rest.
    static const std::regex entry(R"re(\n\s*([a-z]+)\) options="([^"]*)")re");
    for (auto it = std::sregex_iterator(bash.begin(), bash.end(), entry);
         it != std::sregex_iterator(); ++it)
        offered[(*it)[1]] = words((*it)[2]);
    for (const std::string& line : shell_lines(bash)) {
        std::smatch m;
        if (std::regex_search(line, m, list_line)) {
            (m[1] == "commands" ? listed_commands : global) = words(m[2]);
        } else if (line.find("case $prev in") != std::string::npos) {
            in_prev_case = true;
        } else if (in_prev_case && line.find("esac") != std::string::npos) {
            in_prev_case = false;
        } else if (std::regex_search(line, m, pattern_line)) {
            std::set<std::string> names;
            for (const Mention& n : mentions(m[1])) names.insert(n.name);
            if (in_prev_case) takes_value.insert(names.begin(), names.end());
            if (line.find("((i++))") != std::string::npos) skipped_in_loop = names;
        }
    }
    if (listed_commands != command_names)
        problems.push_back(where + " completes the commands " + listed(listed_commands) +
                           "; sqlock has " + listed(command_names));
    if (global != all_names(cli.global, false))
        problems.push_back(where + " completes the global options " + listed(global) +
                           "; they are " + listed(all_names(cli.global, false)));
    for (const OptionSpec& o : cli.top_level)
        for (const std::string& name : o.names)
            if (bash.find(name) == std::string::npos)
                problems.push_back(where + " does not complete " + name);
    if (skipped_in_loop != all_names(cli.global, true))
        problems.push_back(where + " skips the values of " + listed(skipped_in_loop) +
                           " when it looks for the command word; the global options that take "
                           "one are " +
                           listed(all_names(cli.global, true)));
    std::set<std::string> with_value = all_names(cli.global, true);
    for (const CommandSpec& c : cli.commands) {
        std::set<std::string> expected = all_names(c.options, false);
        if (c.takes_command) expected.insert("--");
        const auto it = offered.find(c.name);
        const std::set<std::string> got =
            it == offered.end() ? std::set<std::string>() : it->second;
        if (got != expected)
            problems.push_back(where + " completes `sqlock " + c.name + "` with " +
                               (got.empty() ? "no options" : listed(got)) + "; it has " +
                               (expected.empty() ? "none" : listed(expected)));
        const std::set<std::string> values = all_names(c.options, true);
        with_value.insert(values.begin(), values.end());
    }
    for (const auto& [command, options] : offered)
        if (!command_names.count(command))
            problems.push_back(where + " completes options of `sqlock " + command +
                               "`, which is no command");
    for (const std::string& name : with_value)
        if (!takes_value.count(name))
            problems.push_back(where + ": " + name +
                               " takes a value, but is not among the options whose value "
                               "is not completed as an option (case $prev)");
    for (const std::string& name : takes_value)
        if (!with_value.count(name))
            problems.push_back(where + ": " + name +
                               " is completed as taking a value (case $prev), but no command's " +
                               name + " takes one");
    return problems;
}

}  // namespace sqlock_docs
