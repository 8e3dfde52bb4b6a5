#include "machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "bench_backend.hpp"
#include "sqlock/config.hpp"

namespace sqlock_bench {
namespace {

// The value after "key:" in a /proc file, trimmed.
std::string proc_value(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        std::size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
    }
    return "unknown";
}

std::string first_line(const char* file) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    return line.empty() ? "unknown" : line;
}

std::string os_name() {
    std::ifstream in("/etc/os-release");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("PRETTY_NAME=", 0) == 0) {
            std::string v = line.substr(12);
            if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
            return v + " (debian_version " + first_line("/etc/debian_version") + ")";
        }
    return "unknown";
}

}  // namespace

void describe_machine(Report& report) {
    report.fact("cpu", proc_value("/proc/cpuinfo", "model name"));
    report.fact("cores", std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " online");
    long mem_kib = std::strtol(proc_value("/proc/meminfo", "MemTotal").c_str(), nullptr, 10);
    report.fact("memory", std::to_string(mem_kib / 1024 / 1024) + " GiB");
    report.fact("os", os_name());
    utsname u{};
    if (uname(&u) == 0) report.fact("kernel", std::string(u.sysname) + " " + u.release);
    report.fact("load average at start", first_line("/proc/loadavg"));
    report.fact("sqlock", SQLOCK_VERSION);
    // What each backend built says of itself (a library's version).
    for (const BenchBackend& backend : bench_backends())
        if (backend.hooks && backend.hooks->facts)
            for (const auto& [key, value] : backend.hooks->facts()) report.fact(key, value);
}

}  // namespace sqlock_bench
