package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/agent"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// rssFleetJSON is what arenaprof rss -pyroscope -json prints, as the test
// reads it.
type rssFleetJSON struct {
	Snapshots int `json:"snapshots"`
	RSS       *struct {
		Mean float64 `json:"mean"`
		Max  int64   `json:"max"`
	} `json:"rss_bytes"`
	Classes []struct {
		Class string  `json:"class"`
		Mean  float64 `json:"mean"`
		Max   int64   `json:"max"`
	} `json:"classes"`
	Rows []struct {
		Class string  `json:"class"`
		Key   string  `json:"key"`
		Mean  float64 `json:"mean"`
	} `json:"rows"`
	List []struct {
		Series   map[string]string `json:"series"`
		Time     time.Time         `json:"time"`
		RSSBytes int64             `json:"rss_bytes"`
		Classes  map[string]int64  `json:"classes"`
	} `json:"snapshot_list"`
}

// rssKeep holds the heap objects of the rss end-to-end test live, so that
// go/heap/live has sites.
var rssKeep [][]byte

// testRSSFleet runs two agents (two pods) uploading the resident-memory
// profile of this process (the "rss" source, once a second) through up,
// then reads it back from the Pyroscope server at base with arenaprof rss
// -pyroscope -json, and checks that the server kept every upload apart:
// as many snapshots as uploads, each of its pod and millisecond with the
// classes uploaded (so the classes sum to each snapshot's RSS, the
// uploaded profile's rss_bytes), and each class's mean and maximum over
// them as the uploads give them.
func testRSSFleet(t *testing.T, cli, base string, up agent.Uploader) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	app := fmt.Sprintf("arenaprof_rss_%d", time.Now().UnixNano())
	rec := &recorder{py: up}
	begin := time.Now().Add(-time.Second)
	for range 2000 {
		b := make([]byte, 4096)
		b[0] = 1 // resident: a page never written is not
		rssKeep = append(rssKeep, b)
	}
	runtime.GC()
	// Two pods: two agents of this process, with their own pod label.
	pods := []string{"rss-a", "rss-b"}
	var agents []*agent.Agent
	for _, pod := range pods {
		a, err := agent.Start(agent.Config{
			AppName:   app,
			Labels:    map[string]string{"pod": pod},
			Interval:  time.Second,
			Sources:   []agent.Source{agent.RSSSource()},
			Uploaders: []agent.Uploader{rec.uploader()},
			QueueSize: 20,
		})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	time.Sleep(3500 * time.Millisecond)
	for _, a := range agents {
		sctx, scancel := context.WithTimeout(ctx, 15*time.Second)
		err := a.Stop(sctx)
		scancel()
		if err != nil {
			t.Fatal(err)
		}
		if st := a.Stats(); st.Failed != 0 || st.Dropped != 0 || st.CollectErrors != 0 || st.Uploaded != st.Collected {
			t.Fatalf("agent stats %+v: every profile must be uploaded", st)
		}
	}
	rssKeep = nil
	until := time.Now().Add(time.Minute)

	// What was uploaded: each profile's pod, time (to the millisecond,
	// as the server keeps it), classes and RSS.
	type snap struct {
		pod     string
		ms      int64
		rss     int64
		classes map[string]int64
	}
	pushed := map[[2]any]snap{}
	for _, u := range rec.all() {
		p, err := profile.ParseData(u.Data)
		if err != nil {
			t.Fatal(err)
		}
		s := snap{pod: u.Labels["pod"], ms: p.TimeNanos / 1e6, classes: map[string]int64{}}
		iv, _, ok := pprofmt.RSSIndex(p)
		if !ok {
			t.Fatalf("an upload of sample types %v is not a resident-memory profile", p.SampleType)
		}
		for _, smp := range p.Sample {
			if v := smp.Value[iv]; v != 0 {
				s.classes[smp.Label[pprofmt.LabelClass][0]] += v
			}
		}
		s.rss = rssComment(t, p)
		var sum int64
		for _, v := range s.classes {
			sum += v
		}
		if sum != s.rss {
			t.Fatalf("an uploaded profile's classes sum to %d, its RSS is %d", sum, s.rss)
		}
		pushed[[2]any{s.pod, s.ms}] = s
	}
	if len(pushed) < 6 {
		t.Fatalf("%d rss uploads of two pods, want 6 or more", len(pushed))
	}

	sel := selector(app)
	args := []string{"rss", "-pyroscope", base, "-from", begin.Format(time.RFC3339Nano), "-to", until.Format(time.RFC3339Nano)}
	var got rssFleetJSON
	waitUntil(ctx, t, "arenaprof rss -pyroscope reads every upload", func() error {
		out, err := runCLIErr(cli, append(args, "-n", "0", "-json", sel)...)
		if err != nil {
			return err
		}
		got = rssFleetJSON{}
		if err := json.Unmarshal(out, &got); err != nil {
			return fmt.Errorf("rss -json: %v: %s", err, out)
		}
		if len(got.List) != len(pushed) {
			return fmt.Errorf("%d snapshots read, %d uploaded", len(got.List), len(pushed))
		}
		for _, s := range got.List {
			p, ok := pushed[[2]any{s.Series["pod"], s.Time.UnixMilli()}]
			if !ok {
				return fmt.Errorf("a snapshot of %v at %s, which no upload has", s.Series, s.Time)
			}
			if s.RSSBytes != p.rss || !maps.Equal(s.Classes, p.classes) {
				return fmt.Errorf("snapshot of pod %s at %s: RSS %d, classes %v; uploaded RSS %d, classes %v", p.pod, s.Time, s.RSSBytes, s.Classes, p.rss, p.classes)
			}
		}
		return nil
	})
	// The server names the profile type resident (after the last sample
	// type of a pprof upload, the period type of an OTLP one), whichever
	// way it came: what a user browsing Grafana sees.
	types, err := labelValues(ctx, base, "__profile_type__", sel, begin, until)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(types, func(id string) bool { return strings.HasPrefix(id, "resident:resident:bytes:") }) {
		t.Errorf("profile types of the rss uploads %q: none is resident:resident:bytes:…", types)
	}
	for _, id := range types {
		if !strings.HasPrefix(id, "resident:") {
			t.Errorf("profile type %q of the rss uploads: want it named resident", id)
		}
	}
	listed, err := profileTypes(ctx, base, begin, until)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range types {
		if !listed[id] {
			t.Errorf("profile type %q of the rss uploads is not among the server's ProfileTypes %v", id, listed)
		}
	}
	t.Logf("profile types of the rss uploads: %q", types)
	for _, c := range got.Classes {
		var sum float64
		var mx int64
		for _, s := range pushed {
			sum += float64(s.classes[c.Class])
			mx = max(mx, s.classes[c.Class])
		}
		if mean := sum / float64(len(pushed)); math.Abs(c.Mean-mean) > 1e-9*mean || c.Max != mx {
			t.Errorf("class %s: mean %g, max %d; the uploads give %g, %d", c.Class, c.Mean, c.Max, mean, mx)
		}
	}
	var rssSum float64
	var rssMax int64
	for _, s := range pushed {
		rssSum += float64(s.rss)
		rssMax = max(rssMax, s.rss)
	}
	if got.RSS == nil || math.Abs(got.RSS.Mean-rssSum/float64(len(pushed))) > 1e-9*rssSum || got.RSS.Max != rssMax {
		t.Errorf("RSS %+v; the uploads give mean %g, max %d", got.RSS, rssSum/float64(len(pushed)), rssMax)
	}
	if !slices.ContainsFunc(got.Rows, func(r struct {
		Class string  `json:"class"`
		Key   string  `json:"key"`
		Mean  float64 `json:"mean"`
	}) bool {
		return r.Class == "go/heap/live" && r.Key == "github.com/arenaprof/arenaprof/export/agent_test.testRSSFleet"
	}) {
		t.Errorf("no go/heap/live row of testRSSFleet, whose objects were live: %+v", got.Rows)
	}
	// A selector of no rss upload is refused, naming what the server has.
	if out, err := runCLIErr(cli, append(args, selector(app+"_none"))...); err == nil || !strings.Contains(err.Error(), "no resident-memory (rss) uploads match") || !strings.Contains(err.Error(), app) {
		t.Errorf("a selector of no upload: %v, output %s; want the refusal naming the services, %s among them", err, out, app)
	}
	t.Logf("arenaprof rss -pyroscope over %d uploads:\n%s", len(pushed), runCLI(t, cli, append(args, "-n", "2", sel)...))
}

// rssComment returns the RSS a resident-memory profile states.
func rssComment(t *testing.T, p *profile.Profile) int64 {
	for _, c := range p.Comments {
		var v int64
		if _, err := fmt.Sscanf(c, "arenaprof rss_bytes=%d", &v); err == nil {
			return v
		}
	}
	t.Fatalf("a resident-memory profile without its RSS: %q", p.Comments)
	return 0
}

// runCLIErr runs the CLI and returns its standard output, or an error
// with its output on a non-zero exit.
func runCLIErr(bin string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("arenaprof %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}
