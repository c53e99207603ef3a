package htmlreport

import (
	"strings"
	"testing"

	"github.com/arenaprof/arenaprof/internal/leakspage"
)

// TestLeaksPage: a flagged group's plot has a point per snapshot, the
// wedge and the fitted line; a key with markup and a terminal escape
// stays text; a page without a flagged group says so; bad pages are
// refused.
func TestLeaksPage(t *testing.T) {
	times := []float64{0, 1, 2, 3, 4, 5, 6, 7}
	key := "main.<script>alert(1)</script>\x1b[31m"
	page := func(series []float64) *leakspage.Page {
		return &leakspage.Page{Title: "arenaprof leaks x", KeyHead: "FUNCTION", Cols: []string{"KIND"}, Confidence: 0.95,
			Times: times, From: 4, Rows: []leakspage.Row{{Key: key, Kind: "heap", Rate: 10, Lo: 8, Hi: 12, Flagged: series != nil,
				InUseFirst: 100, InUseLast: 170, Cells: []string{"heap"}, Mark: "LEAK", Series: series, T0: 5.5, Y0: 155}}}
	}
	for _, tc := range []struct {
		name   string
		page   *leakspage.Page
		err    string
		want   []string
		absent []string
	}{
		{name: "flagged", page: page([]float64{100, 110, 120, 130, 140, 150, 160, 170}),
			want:   []string{`data-flagged="true"`, `data-rate="10"`, `<figure class="leak"`, `<polygon class="band"`, `<line class="fit"`, `&lt;script&gt;`},
			absent: []string{"<script>alert", "\x1b"}},
		{name: "none flagged", page: page(nil), want: []string{"No group is flagged"}, absent: []string{`<figure`}},
		{name: "nil", err: "nil leaks page"},
		{name: "short series", page: page([]float64{1, 2}), err: "not as long as its times"},
		{name: "no fit start", page: &leakspage.Page{Times: times, From: 8}, err: "its fit's start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			err := leaksPage(&b, tc.page)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(out, a) {
					t.Errorf("the page holds %q", a)
				}
			}
			if tc.page.Rows[0].Series != nil {
				i := strings.Index(out, `<polyline class="inuse" points="`)
				pts := strings.Fields(strings.SplitN(out[i+len(`<polyline class="inuse" points="`):], `"`, 2)[0])
				if len(pts) != len(times) {
					t.Errorf("%d points, want %d", len(pts), len(times))
				}
			}
		})
	}
}
