package main

import (
	"flag"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/report"
)

// readLimitFlags are -max-bytes and -max-memory on the flag set of a
// command that defines no others (top, diff and holdings define theirs
// with the group flags, advise its own): every command that reads a
// profile has them, so that a refusal's advice to raise one can be
// followed.
type readLimitFlags struct{ maxBytes, maxMemory *string }

// addReadLimitFlags defines -max-bytes and -max-memory on fs.
func addReadLimitFlags(fs *flag.FlagSet) readLimitFlags {
	return readLimitFlags{
		maxBytes:  fs.String("max-bytes", formatByteSize(pprofmt.DefaultMaxBytes), "refuse a profile larger than `N` bytes, compressed or decompressed (a number of bytes or with a unit: 4GiB, 500MB)"),
		maxMemory: fs.String("max-memory", formatByteSize(pprofmt.DefaultMaxMemory), "refuse a profile that would take more than `N` bytes of memory to read and decode, judged from its records before decoding them"),
	}
}

// values returns the bounds the flags give.
func (f readLimitFlags) values() (report.ParseOptions, error) {
	var lim report.ParseOptions
	var ok bool
	if lim.MaxBytes, ok = parseByteSize(*f.maxBytes); !ok {
		return lim, topUsageErr("bad -max-bytes %q; use a positive number of bytes, e.g. 4GiB or 4294967296", *f.maxBytes)
	}
	if lim.MaxMemory, ok = parseByteSize(*f.maxMemory); !ok {
		return lim, topUsageErr("bad -max-memory %q; use a positive number of bytes, e.g. 2GiB or 2147483648", *f.maxMemory)
	}
	return lim, nil
}
