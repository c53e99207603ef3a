package main

import (
	"cmp"
	"io"
	"strings"

	"github.com/arenaprof/arenaprof/internal/leakspage"
	"github.com/arenaprof/arenaprof/internal/tabfmt"
)

// htmlLeaksArgs takes html's own flags (-o FILE, -open) and -leaks out of
// args: leaks says whether -leaks was given, rest is what arenaprof leaks
// parses, err the first of html's own flags that is wrong (leaks is
// still told). Everything after "--" is left as it is.
func htmlLeaksArgs(args []string) (rest []string, ho htmlOptions, leaks bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), ho, leaks, err
		}
		if len(a) < 2 || a[0] != '-' {
			rest = append(rest, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch name {
		case "o":
			if !hasVal {
				if i+1 == len(args) {
					err = cmp.Or(err, topUsageErr("flag needs an argument: -o"))
					continue
				}
				i++
				val = args[i]
			}
			ho.out = val
		case "open", "leaks":
			on := true
			switch {
			case !hasVal:
			case val == "true" || val == "1":
			case val == "false" || val == "0":
				on = false
			default:
				err = cmp.Or(err, topUsageErr("-%s=%s: want true or false", name, val))
			}
			if name == "open" {
				ho.open = on
			} else {
				leaks = on
			}
		default:
			rest = append(rest, a)
		}
	}
	return rest, ho, leaks, err
}

// htmlLeaks renders the page of a leaks read from the very rows
// arenaprof leaks -json prints for the same flags, with a plot of each
// flagged group's in-use bytes over time and its fitted rate.
func htmlLeaks(w io.Writer, args []string, stderr io.Writer) error {
	o, err := parseLeaksArgs(args, stderr)
	if err != nil {
		return err
	}
	switch {
	case o.pyro.on():
		return topUsageErr("-pyroscope does not apply yet: the page plots each snapshot, and a fleet read has batch means; use leaks -pyroscope")
	case o.json:
		return topUsageErr("-json does not apply: html writes a page; use leaks -json for JSON")
	case o.fail:
		return topUsageErr("-fail does not apply: html's exit status is its own; use leaks -fail for a gate")
	}
	r, err := readLeaks(&o, stderr)
	if err != nil {
		return err
	}
	rows := r.rows
	if o.n > 0 && len(rows) > o.n {
		rows = rows[:o.n]
	}
	kind, label := groupKind(o.by)
	p := &leakspage.Page{
		Title:   redactText("arenaprof leaks " + strings.Join(o.inputs, " ")),
		Heading: redactLines(leaksHeading(r, rows, o)),
		KeyHead: tabfmt.KeyHeading(kind, label), Cols: leaksCols(o), Confidence: o.conf,
		Times: r.s.seconds(), From: r.from,
	}
	for _, row := range rows {
		cells, flag := leakCells(r, row, o)
		pr := leakspage.Row{
			Key: jsonPrinted(row.Key), Kind: row.Kind, Rate: row.Rate, Lo: row.Lo, Hi: row.Hi, Flagged: row.Flagged,
			InUseFirst: row.InUseFirst, InUseLast: row.InUseLast, Cells: cells, Mark: flag,
		}
		if row.Flagged {
			id := row.Kind + "\x00" + row.Key
			f := r.fits[id]
			pr.Series, pr.T0, pr.Y0 = r.s.groups[id].y, f.T0, f.Y0
		}
		p.Rows = append(p.Rows, pr)
	}
	return leakspage.Write(w, p)
}
