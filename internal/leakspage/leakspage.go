// Package leakspage describes the page of a leaks read: arenaprof html
// -leaks, the groups arenaprof leaks fits with their rates and
// intervals, and each flagged group's in-use bytes over time with the
// fitted rate. report/htmlreport, which holds the pages' template, style
// and script, sets Write when it is linked in, so that the command draws
// the page the way it draws the others without a name added to the
// public API for a type users cannot build (the series' reader is
// internal).
package leakspage

import "io"

// Row is one group's line, as arenaprof leaks -json prints it.
type Row struct {
	// Key and Kind ("heap" or "arena") name the group.
	Key, Kind string
	// Rate, Lo and Hi are the growth in bytes per second and its
	// family-wise interval; Flagged means Lo is above the minimum rate.
	Rate, Lo, Hi float64
	Flagged      bool
	// InUseFirst and InUseLast are the estimated bytes at the first and
	// last snapshot analysed.
	InUseFirst, InUseLast int64
	// Cells are the table's cells before the key, as arenaprof leaks
	// shows them; Mark is "LEAK" on a flagged row.
	Cells []string
	Mark  string
	// Series is the group's estimated in-use bytes at each of the
	// page's Times; T0, Y0 the point the fitted lines pass through
	// (seconds, bytes). Set on the groups the page plots.
	Series []float64
	T0, Y0 float64
}

// Page is what the page shows.
type Page struct {
	// Title is the page's title; Heading the lines above the table.
	Title   string
	Heading []string
	// KeyHead names the key column; Cols the heads of the cells before
	// it; Confidence is the intervals' family-wise level.
	KeyHead    string
	Cols       []string
	Confidence float64
	// Times are the snapshots' times, seconds from the first; From is
	// the index of the first one the rates are fitted over.
	Times []float64
	From  int
	// Rows are the groups in the order shown; the plots are those with
	// a Series.
	Rows []Row
}

// Write writes the page of p; report/htmlreport sets it.
var Write func(w io.Writer, p *Page) error
