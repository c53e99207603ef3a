// Package agentcost measures what arenaprof's agent costs a service: a
// net/http JSON service (encoding/json, an arena per request) runs in a
// child process at a fixed request rate, once per configuration (no Start,
// Start without a destination, Start writing to a directory with the
// default profiles, each profile alone), and the child's peak RSS (VmHWM)
// and CPU per request are compared side by side. It runs only when
// ARENAPROF_AGENTCOST is set (see TestAgentCost); BENCHMARKS.md publishes
// its figures. The package has no API.
package agentcost
