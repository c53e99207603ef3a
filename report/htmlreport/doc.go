// Package htmlreport writes arenaprof's reports as self-contained HTML
// pages: the table of [report.Table] with an interval bar per group on a
// shared axis, a flame graph of [report.Flame] whose frames carry their
// intervals, and the comparison of [report.Diff] with each ratio's
// interval on a log axis and the verdict of a [report.Gate], the exact
// table of a live-arenas profile ([report.Holdings]), and the exact
// comparison of two ([report.DiffHoldings]). arenaprof html writes these
// pages, and export's /debug/arenaprof/ui serves one.
//
// A page requests nothing from the network: its style and script are
// inline, and its Content-Security-Policy (a meta element, and
// [ContentSecurityPolicy] for a server's header) lets nothing else load
// or run. It opens from file://. Its table is readable without
// JavaScript; the script adds sorting, the filter box, and the flame
// graph's zoom and search.
//
// Every table row element carries its numbers for machine checks, as
// arenaprof top -json and diff -json give them: data-key, data-est,
// data-lo and data-hi on a table's rows (all three the reserved bytes on
// a live-arenas table's); data-key, data-ratio-lo,
// data-ratio-hi (empty where -json has null) and data-significant on a
// comparison's; the total row is in the table's tfoot. Each flame-graph
// frame element carries data-frame, its function name. Exact counts have
// no interval: on the comparison of two live-arenas profiles
// data-ratio-lo and data-ratio-hi are both the exact ratio of NEW's
// reserved bytes to BASE's (empty when BASE holds none), a point rather
// than an interval, data-significant is "true" on the rows whose reserved
// bytes grew (the rows marked "+", -json's growing: an exact change needs
// no test), and data-base-reserved, data-new-reserved and data-delta give
// the bytes themselves.
//
// A row's key is in the page once, in data-key: the style sheet shows it
// after the row's cells, which keeps a page of 10,000 stacks under 5 MB.
// Names come from binaries and uploads: the template escapes every one;
// a key with control characters (terminal escapes) or bidirectional
// overrides gets a cell of its own that shows them as '?', and data-key
// keeps the key as it is.
//
// Usage:
//
//	t, err := report.Table(prof, report.TableOptions{By: "func"})
//	if err != nil {
//		return err
//	}
//	flame, err := report.Flame(prof, report.FlameOptions{MinShare: 0.001})
//	if err != nil {
//		return err
//	}
//	return htmlreport.Top(w, t, htmlreport.Options{Flame: flame})
package htmlreport
