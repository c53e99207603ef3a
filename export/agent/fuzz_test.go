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
