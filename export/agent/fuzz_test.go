package agent

import (
	"testing"
	"time"
)

func FuzzFileName(f *testing.F) {
	f.Add("shop", "env", "prod", "arena", int64(0))
	f.Add("../..", "k", "/etc/passwd", "..", int64(-1))
	f.Add("a\x00b", "ü", "\xff\xfe", "", int64(1<<62))
	f.Fuzz(func(t *testing.T, app, k, v, prof string, sec int64) {
		until := time.Unix(sec, 0)
		name := fileName(app, map[string]string{k: v}, prof, until)
		checkSafeName(t, name)
		if fileName(app, nil, prof, until) == "" {
			t.Fatal("empty name")
		}
	})
}

func FuzzIngestName(f *testing.F) {
	f.Add("shop", "arena", "env", "prod")
	f.Add("a{b}", "x,y", "k=1", "v}{,=")
	f.Add("", "", "", "")
	f.Add("\xff", "ü", "ü", "\x00")
	f.Fuzz(func(t *testing.T, app, prof, k, v string) {
		name := ingestName(app, map[string]string{k: v, "env": "prod", "memory": prof})
		gotApp, labels, err := parseName(name)
		if err != nil {
			t.Fatalf("ingestName(%q, %q=%q, memory=%q) = %q: %v", app, k, v, prof, name, err)
		}
		if gotApp == "" || len(labels) < 2 || len(labels) > 3 {
			t.Fatalf("%q parsed as %q %v", name, gotApp, labels)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "5", "-1", "1e9", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		d := parseRetryAfter(s, now)
		if d < 0 || d > maxRetryAfter {
			t.Fatalf("parseRetryAfter(%q) = %v", s, d)
		}
	})
}

// FuzzConfigNumbers feeds arbitrary numbers to the config: validation
// either rejects them with an error or yields values within the bounds.
func FuzzConfigNumbers(f *testing.F) {
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(0), 0, 0, int64(0), int64(0))
	f.Add(int64(-1), int64(1), int64(1<<62), int64(-1<<62), int64(5), -5, 1<<20, int64(-1), int64(1<<62))
	f.Add(int64(time.Millisecond), int64(time.Second), int64(time.Second), int64(time.Millisecond), int64(1), 1000, -1, int64(time.Hour), int64(1))
	f.Fuzz(func(t *testing.T, interval, timeout, base, maxB, retryAfter int64, retries, queue int, drain, retryTime int64) {
		c := Config{
			AppName: "a", Sources: []Source{&testSource{name: "x"}}, Uploaders: []Uploader{&recorder{}},
			Interval: time.Duration(interval), Timeout: time.Duration(timeout),
			BackoffBase: time.Duration(base), BackoffMax: time.Duration(maxB),
			RetryAfterMax: time.Duration(retryAfter), MaxRetries: retries, QueueSize: queue,
			DrainTimeout: time.Duration(drain), MaxRetryTime: time.Duration(retryTime),
		}
		got, err := c.validate()
		if err != nil {
			return
		}
		if got.Interval < minInterval || got.Interval > maxInterval || got.Timeout <= 0 ||
			got.MaxRetries < -1 || got.MaxRetries > maxRetriesLimit || got.QueueSize < 1 || got.QueueSize > maxQueueSize ||
			got.BackoffBase <= 0 || got.BackoffMax < got.BackoffBase || got.RetryAfterMax <= 0 ||
			got.DrainTimeout <= 0 || got.DrainTimeout > 24*time.Hour || got.MaxRetryTime <= 0 || got.MaxRetryTime > 24*time.Hour {
			t.Fatalf("accepted out-of-bounds config %+v", got)
		}
		a := &Agent{cfg: got}
		for _, attempt := range []int{0, 1, 5, 61, 62, 63, 1000} {
			if w := a.backoff(attempt); w < 0 || w > got.BackoffMax {
				t.Fatalf("backoff(%d) = %v outside [0, %v]", attempt, w, got.BackoffMax)
			}
		}
	})
}

// FuzzDelta: whatever the two snapshots hold, the delta has no negative
// value and keeps the in-use values of the current one.
func FuzzDelta(f *testing.F) {
	f.Add(int64(3), int64(3000), int64(5000), int64(5), int64(5000), int64(2000))
	f.Add(int64(9), int64(1), int64(0), int64(1), int64(9), int64(-7))
	f.Fuzz(func(t *testing.T, s1, a1, i1, s2, a2, i2 int64) {
		cur := arenaLikeProfile(s2, a2, i2)
		d, err := profileDelta(arenaLikeProfile(s1, a1, i1), cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Sample {
			for i, v := range s.Value {
				if v < 0 && !isInUse(d.SampleType[i].Type) {
					t.Fatalf("negative %s: %d", d.SampleType[i].Type, v)
				}
			}
			if s.Value[3] != cur.Sample[0].Value[3] {
				t.Fatalf("inuse_space %d, want %d", s.Value[3], cur.Sample[0].Value[3])
			}
		}
	})
}

// FuzzDeltaFoldedSpan: a site's sample under a span ID before (s1
// samples), the site's sample without it (s2) and, if s3 >= 0, the span's
// again (s3) after: the delta has no negative value, and when the site's
// sample gained at least what the span's lost (as a fold gives it), the
// window's samples are exactly the totals' difference.
func FuzzDeltaFoldedSpan(f *testing.F) {
	f.Add(int64(3), int64(5), int64(-1))
	f.Add(int64(3), int64(2), int64(2))
	f.Add(int64(3), int64(3), int64(4))
	f.Fuzz(func(t *testing.T, s1, s2, s3 int64) {
		if s1 < 0 || s2 < 0 || s1 > 1<<40 || s2 > 1<<40 || s3 > 1<<40 {
			return // counts, from a profiler: not negative, not near overflow
		}
		prev := arenaLikeProfile(s1, 100*s1, 0)
		prev.Sample[0].Label["span_id"] = []string{"aa"}
		cur := arenaLikeProfile(s2, 100*s2, 0)
		total := s2
		if s3 >= 0 {
			sp := *arenaLikeProfile(s3, 100*s3, 0).Sample[0]
			sp.Label = map[string][]string{"type": {"main.user"}, "span_id": {"aa"}}
			cur.Sample = append(cur.Sample, &sp)
			total += s3
		}
		d, err := profileDelta(prev, cur)
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		for _, s := range d.Sample {
			for i, v := range s.Value {
				if v < 0 && !isInUse(d.SampleType[i].Type) {
					t.Fatalf("negative %s: %d", d.SampleType[i].Type, v)
				}
			}
			got += s.Value[4]
		}
		lost := s1 // what the span's sample lost
		if s3 >= 0 {
			lost = max(0, s1-s3)
		}
		if s2 >= lost && total >= s1 && got != total-s1 {
			t.Fatalf("window: %d samples, want %d", got, total-s1)
		}
	})
}
