#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sqlock_bench {
namespace {

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string thousands(double v) {
    std::string digits = fixed(std::round(v), 0);
    std::string out;
    const std::size_t start = digits[0] == '-' ? 1 : 0;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > start && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string goal_text(const Result& r) {
    switch (r.goal.what) {
        case Goal::kind::none:
            return "-";
        case Goal::kind::ratio_at_least:
            return ">= " + fixed(r.goal.bound, 2) + "x";
        case Goal::kind::ratio_at_most:
            return "<= " + fixed(r.goal.bound, 2) + "x";
        case Goal::kind::below:
            return "< " + format_value(r.goal.bound, r.unit);
    }
    return "-";
}

const char* state_name(Result::state s) {
    switch (s) {
        case Result::state::measured:
            return "measured";
        case Result::state::skipped:
            return "skipped";
        case Result::state::failed:
            return "failed";
    }
    return "?";
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string format_value(double v, const std::string& unit) {
    if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0)
        return (v >= 100 ? thousands(v) : fixed(v, 1)) + " " + unit;
    if (unit == "ms") return fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0) + " ms";
    if (unit == "us") return fixed(v, v < 100 ? 1 : 0) + " us";
    if (unit == "s") return fixed(v, 2) + " s";
    if (unit == "MiB") return fixed(v, 1) + " MiB";
    return fixed(v, 2) + " " + unit;
}

std::optional<double> Result::ratio() const {
    if (paired_ratio) return paired_ratio;
    if (!sqlock || !baseline || *baseline == 0.0) return std::nullopt;
    return *sqlock / *baseline;
}

std::optional<bool> Result::met() const {
    if (status != state::measured || !sqlock) return std::nullopt;
    auto q = ratio();
    switch (goal.what) {
        case Goal::kind::none:
            return std::nullopt;
        case Goal::kind::ratio_at_least:
            if (q) return *q >= goal.bound;
            return std::nullopt;
        case Goal::kind::ratio_at_most:
            if (q) return *q <= goal.bound;
            return std::nullopt;
        case Goal::kind::below:
            return *sqlock < goal.bound;
    }
    return std::nullopt;
}

void Report::fact(const std::string& key, const std::string& value) {
    for (auto& [k, v] : facts_)
        if (k == key) {
            v = value;
            return;
        }
    facts_.emplace_back(key, value);
}

void Report::note(const std::string& text) {
    notes_.push_back(text);
}

void Report::add(Result row) {
    rows_.push_back(std::move(row));
}

void Report::skip(const std::string& section, const std::string& backend, const std::string& why) {
    Result r;
    r.section = section;
    r.operation = section;
    r.backend = backend;
    r.status = Result::state::skipped;
    r.note = why;
    rows_.push_back(std::move(r));
}

void Report::fail(const std::string& section, const std::string& backend, const std::string& what) {
    Result r;
    r.section = section;
    r.operation = section;
    r.backend = backend;
    r.status = Result::state::failed;
    r.note = what;
    rows_.push_back(std::move(r));
}

bool Report::any_failed() const {
    return std::any_of(rows_.begin(), rows_.end(),
                       [](const Result& r) { return r.status == Result::state::failed; });
}

void Report::print_table(std::ostream& out) const {
    for (const auto& [k, v] : facts_) out << k << ": " << v << "\n";
    out << "\n";

    std::vector<std::vector<std::string>> cells;
    cells.push_back(
        {"operation", "backend", "sqlock", "baseline", "baseline is", "ratio", "target", "met?"});
    std::vector<std::string> footnotes;
    for (const Result& r : rows_) {
        std::string op = r.operation;
        if (!r.note.empty()) {
            // Skips of one backend share their reason: one footnote for all.
            auto it = std::find(footnotes.begin(), footnotes.end(), r.note);
            if (it == footnotes.end()) it = footnotes.insert(footnotes.end(), r.note);
            op += " [" + std::to_string(it - footnotes.begin() + 1) + "]";
        }
        if (r.status != Result::state::measured) {
            cells.push_back({op, r.backend,
                             r.status == Result::state::skipped ? "skipped" : "ERROR", "-", "-",
                             "-", "-", "-"});
            continue;
        }
        auto q = r.ratio();
        auto m = r.met();
        cells.push_back({op, r.backend, r.sqlock ? format_value(*r.sqlock, r.unit) : "-",
                         r.baseline ? format_value(*r.baseline, r.unit) : "-",
                         r.baseline_name.empty() ? "-" : r.baseline_name,
                         q ? fixed(*q, 2) + "x" : "-", goal_text(r),
                         m ? (*m ? "yes" : "NO") : "-"});
    }
    std::vector<std::size_t> width(cells[0].size(), 0);
    for (const auto& row : cells)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    auto print_row = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t c = 0; c < row.size(); ++c) {
            // Figures are right-aligned, text left-aligned.
            const bool figure = c == 2 || c == 3 || c == 5;
            std::string pad(width[c] - row[c].size(), ' ');
            line += figure ? pad + row[c] : row[c] + pad;
            if (c + 1 < row.size()) line += "  ";
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out << line << "\n";
    };
    print_row(cells[0]);
    std::vector<std::string> rule;
    for (std::size_t w : width) rule.push_back(std::string(w, '-'));
    print_row(rule);
    for (std::size_t i = 1; i < cells.size(); ++i) print_row(cells[i]);

    if (!footnotes.empty()) out << "\n";
    for (std::size_t i = 0; i < footnotes.size(); ++i)
        out << "[" << i + 1 << "] " << footnotes[i] << "\n";
    if (!notes_.empty()) out << "\n";
    for (const auto& n : notes_) out << "note: " << n << "\n";
}

nlohmann::json Report::to_json() const {
    nlohmann::json facts = nlohmann::json::object();
    for (const auto& [k, v] : facts_) facts[k] = v;
    nlohmann::json rows = nlohmann::json::array();
    for (const Result& r : rows_) {
        rows.push_back({
            {"section", r.section},
            {"operation", r.operation},
            {"backend", r.backend},
            {"status", state_name(r.status)},
            {"unit", r.unit},
            {"sqlock", optional_json(r.sqlock)},
            {"baseline", optional_json(r.baseline)},
            {"baseline_is", r.baseline_name},
            {"ratio", optional_json(r.ratio())},
            {"target", r.goal.what == Goal::kind::none ? nlohmann::json(nullptr)
                                                       : nlohmann::json(goal_text(r))},
            {"met", optional_json(r.met())},
            {"note", r.note},
        });
    }
    // "format" changes when fields change meaning, so that scripts comparing
    // runs can tell.
    return {{"format", 1}, {"facts", facts}, {"notes", notes_}, {"results", rows}};
}

}  // namespace sqlock_bench
