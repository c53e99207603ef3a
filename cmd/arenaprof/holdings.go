package main

import (
	"github.com/arenaprof/arenaprof/internal/pprofmt"

	"encoding/json"
	"io"
	"strings"

	"github.com/arenaprof/arenaprof/report"
)

// holdingsBy is the grouping of a live-arenas profile: the -by flag, or
// by function when it was not given.
func holdingsBy(o commonOptions) string {
	if o.byDefault {
		return "func"
	}
	return o.by
}

// topHoldings writes the table of a live-arenas profile: exact counts,
// no intervals.
func topHoldings(ap *arenaProfile, opts topOptions, stdout io.Writer) error {
	res, err := holdingsTable(ap, opts)
	if err != nil {
		return err
	}
	if opts.json {
		return writeJSON(stdout, holdingsJSON{
			Exact: true, By: res.By, OldAgeSeconds: res.OldAge.Seconds(),
			Groups: res.Groups, Rows: res.Rows, Total: res.Total,
		})
	}
	if err := opts.filter.writeHeading(stdout); err != nil {
		return err
	}
	return formatHoldings(stdout, res, opts.width)
}

// holdingsTable groups a live-arenas profile as top's flags say.
func holdingsTable(ap *arenaProfile, opts topOptions) (*report.HoldingsResult, error) {
	res, err := report.Holdings(ap.prof, report.HoldingsOptions{By: holdingsBy(opts.commonOptions), N: opts.n, OldAge: opts.oldAge})
	if err != nil {
		return nil, topInputErr("%s: %s", opts.src, strings.TrimPrefix(err.Error(), "report: "))
	}
	return res, nil
}

// holdingsJSON is the -json output of top on a live-arenas profile.
type holdingsJSON struct {
	Exact         bool                 `json:"exact"` // always true: not sampled, no intervals
	By            string               `json:"by"`
	OldAgeSeconds float64              `json:"old_age_seconds"`
	Groups        int                  `json:"groups"`
	Rows          []report.HoldingsRow `json:"rows"`
	Total         report.HoldingsRow   `json:"total"`
}

// diffHoldings compares two live-arenas profiles.
func diffHoldings(base, next *arenaProfile, opts diffOptions, stdout io.Writer) error {
	by, rows, total, err := holdingsDiffRows(base, next, opts)
	if err != nil {
		return err
	}
	if opts.n > 0 && len(rows) > opts.n {
		rows = rows[:opts.n]
	}
	if opts.json {
		return writeJSON(stdout, struct {
			Exact bool                     `json:"exact"`
			By    string                   `json:"by"`
			Rows  []report.HoldingsDiffRow `json:"rows"`
			Total report.HoldingsDiffRow   `json:"total"`
		}{true, by, rows, total})
	}
	return formatHoldingsDiff(stdout, holdingsDiffHeading(opts, by), by, rows, total, opts.width)
}

// holdingsDiffRows filters two live-arenas profiles as diff's flags say
// and compares every group: what diff prints and what html draws.
func holdingsDiffRows(base, next *arenaProfile, opts diffOptions) (string, []report.HoldingsDiffRow, report.HoldingsDiffRow, error) {
	var total report.HoldingsDiffRow
	if base.facts.Kind != pprofmt.KindHoldings || next.facts.Kind != pprofmt.KindHoldings {
		return "", nil, total, topInputErr("%s vs %s: a live-arenas profile compares only with another live-arenas profile", opts.base, opts.next)
	}
	if opts.failAbove > 0 {
		return "", nil, total, topUsageErr("-fail-above tests the intervals of sampled profiles; %s and %s are live-arenas profiles, exact counts: read the + marks of the groups that grew", opts.base, opts.next)
	}
	if opts.per != "none" && opts.per != "" {
		return "", nil, total, topUsageErr("-per %s divides allocations over a window; %s and %s are live-arenas profiles, what arenas held at one moment: compare them as they are", opts.per, opts.base, opts.next)
	}
	if err := opts.filter.applyBoth(opts.base, opts.next, base, next); err != nil {
		return "", nil, total, err
	}
	by := holdingsBy(opts.commonOptions)
	rows, total, err := report.DiffHoldings(base.prof, next.prof, by)
	if err != nil {
		return "", nil, total, topInputErr("%s vs %s: %s", opts.base, opts.next, strings.TrimPrefix(err.Error(), "report: "))
	}
	return by, rows, total, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
