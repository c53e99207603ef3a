// Command arenaprof reads arenaprof profiles and computes confidence
// intervals for sampled allocation estimates.
//
// Usage:
//
//	arenaprof interval -samples S -tail U [-mean 102400] [-confidence 0.95] [-window aligned|start|end|both] [-json]
//	arenaprof top [-by type|func|stack|label=KEY] [-sample alloc|inuse] [-n N] [-confidence C] [-json] PROFILE
//	arenaprof diff [-by ...] [-sample alloc|inuse] [-n N] [-confidence C] [-fail-above R] [-json] BASE NEW
//
// Exit status: 0 on success, 2 for bad flags or arguments, 1 for other
// failures (an unreadable profile, an unreachable URL); diff exits 3 when
// its -fail-above gate fails.
package main

import (
	"fmt"
	"io"
	"os"
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
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
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
	fmt.Fprintln(w, "run 'arenaprof <command> -h' for a command's flags")
}
