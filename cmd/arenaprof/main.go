// Command arenaprof reads arenaprof profiles and computes confidence
// intervals for sampled allocation estimates.
//
// Usage:
//
//	arenaprof interval -samples S -tail U [-mean BYTES] [-confidence C] [-window aligned|start|end|both] [-json]
//	arenaprof top [-by type|func|stack|size|label=KEY] [-sample alloc|inuse] [-n N] [-confidence C] [-focus RE] [-ignore RE] [-tagfocus F] [-tagignore F] [-json] PROFILE
//	arenaprof diff [same flags as top] [-fail-above R [-min-share S] [-min-bytes N]] BASE NEW
//	arenaprof advise [-by site|func|stack|label=KEY] [-lifetime D] [-n N] [-confidence C] [-json] EARLIER LATER
//	arenaprof advise -seconds N [flags] URL
//	arenaprof html [-o FILE] [-open] [top's flags] PROFILE
//	arenaprof html [-o FILE] [-open] [diff's flags] BASE NEW
//	arenaprof rss [-by func|stack] [-n N] [-confidence C] [-json] [-peak] SOURCE
//	arenaprof leaks [-json] [-by func|stack|type|label=KEY] [-confidence C] [-min-rate R] [-limit L] [-n N] [-fail] INPUTS...
//	arenaprof help [COMMAND]
//	arenaprof version
//
// PROFILE, BASE and NEW are files (gzipped or not), http(s) URLs of the
// arenaprof handler, or - for standard input.
//
// Exit status: 0 on success, 2 for bad flags or arguments, 1 for other
// failures (an unreadable profile, an unreachable URL); diff exits 3 when
// its -fail-above gate fails, leaks with -fail when a group is flagged.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// command is one subcommand: it parses args and writes its output; it returns
// the exit status.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"interval", "confidence interval for S sample events with tail sum U", runInterval},
		{"top", "estimates with confidence intervals per type, function, stack or label", runTop},
		{"diff", "which groups really changed between two profiles, with an interval on the ratio", runDiff},
		{"advise", "which Go heap allocations to move into arenas, and the GC cycles it saves", runAdvise},
		{"html", "top's table with interval bars and a flame graph, or diff's ratios, as one HTML page", runHTML},
		{"rss", "where the resident memory (RSS) goes: every byte in one class, sites with intervals", runRSS},
		{"leaks", "which groups' in-use bytes are still growing, how fast, with family-wise intervals", runLeaks},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command of args; what it writes to stdout and stderr is
// made safe for a terminal (see termWriter).
func run(args []string, stdout, stderr io.Writer) int {
	out, errOut := &termWriter{w: stdout}, &termWriter{w: stderr}
	defer out.Flush()
	defer errOut.Flush()
	return dispatch(args, out, errOut)
}

// dispatch runs the command args name.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "help":
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		for _, c := range commands() {
			if c.name == args[1] {
				return c.run([]string{"-h"}, stdout, stdout)
			}
		}
		fmt.Fprintf(stderr, "arenaprof help: unknown command %q (run 'arenaprof help' for the list)\n", args[1])
		return 2
	case "version":
		fmt.Fprintln(stdout, version())
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "arenaprof: unknown command %q (run 'arenaprof help' for the list)\n", args[0])
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: arenaprof <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "  help      a command's flags: arenaprof help top")
	fmt.Fprintln(w, "  version   the version of this build")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "run 'arenaprof help <command>' or 'arenaprof <command> -h' for a command's flags")
}

// version describes this build from its build information: the module
// version ("(devel)" for a build from a checkout), the VCS revision when
// recorded, and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "arenaprof (no build information)"
	}
	v := "arenaprof " + bi.Main.Version
	if v == "arenaprof " {
		v += "(unknown)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				v += " (modified)"
			}
		}
	}
	return v + " " + bi.GoVersion
}
