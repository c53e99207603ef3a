// Package treepage describes the page of a tree of byte counts, some
// exact and some estimated with an interval: arenaprof html of a
// resident-memory profile (its classes, and the sites below them).
// report/htmlreport, which holds the pages' template, style and script,
// sets Write when it is linked in, so that the command draws the page
// the way it draws the others without a name added to the public API for
// a type users cannot build (the profile's reader is internal).
package treepage

import "io"

// Row is one row of the tree, in the order shown.
type Row struct {
	// Key is the row's name: a class path (go/heap/live), a prefix of
	// one (go/heap), or a site's key below a class.
	Key string
	// Class is the class the row is, or that a site row is under; ""
	// on a prefix row.
	Class string
	// Depth is the row's indentation: 0 at the root.
	Depth int
	// Bytes is the figure; Lo and Hi its interval (Lo = Hi = Bytes for
	// an exact one unless Estimated).
	Bytes, Lo, Hi int64
	// Estimated marks an estimate with its interval; exact otherwise.
	Estimated bool
}

// Page is what the page shows.
type Page struct {
	// Title is the page's title; Heading the lines above the table.
	Title   string
	Heading []string
	// KeyHead names the key column; Confidence is the intervals' level.
	KeyHead    string
	Confidence float64
	// Rows are the tree's rows; Total the total row (its Key the
	// total's name).
	Rows  []Row
	Total Row
}

// Write writes the page of p; report/htmlreport sets it.
var Write func(w io.Writer, p *Page) error
