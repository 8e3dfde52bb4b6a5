// The fencing trials at a higher scheduling priority than the suites beside
// them. A trial's margin (lease/20, at least 200 ms) is there for the
// supervisor's scheduling delay, and in a whole run the other suites and
// the sanitizer lanes keep both cores busy: they must not eat it. Only root
// may raise a priority (CI runs as root); anyone else keeps the usual one.
// Set before main(), so every thread and child of the suite inherits it.
#include <sys/resource.h>

namespace {

const bool raised = [] { return setpriority(PRIO_PROCESS, 0, -5) == 0; }();

}  // namespace
