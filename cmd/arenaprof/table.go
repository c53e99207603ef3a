package main

import (
	"io"
	"text/tabwriter"
)

// newTable returns the tab writer every table of the command is laid out
// with: cells separated by tabs, left-aligned, two spaces between columns.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}
