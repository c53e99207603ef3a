package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/agent"
)

// The typical arena profile of one interval the type-frame measurement
// uploads (as BENCHMARKS.md's upload cost): 160 allocation sites, 8
// types, 10-frame stacks.
const (
	tfSites   = 160
	tfTypes   = 8
	tfDepth   = 10
	tfUploads = 20
)

// testTypeFrames measures what the type frames cost the server: the same
// uploads, with and without them, each pushed to a fresh server that is
// then stopped (flushing its blocks). The number of series must be the
// same (the type is a series label either way); the bytes on disk are
// reported.
func testTypeFrames(t *testing.T, script string) {
	type result struct {
		series           int
		received, onDisk int64
	}
	measure := func(noFrames bool) result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+serverSlack(t, script, 2))
		defer cancel()
		dir := t.TempDir()
		srv := startPyroscope(t, script, dir)
		py, err := agent.NewPyroscope(agent.PyroscopeConfig{URL: srv.url, NoTypeFrames: noFrames})
		if err != nil {
			t.Fatal(err)
		}
		defer py.(io.Closer).Close()
		app := "typeframes"
		start := time.Now().Add(-time.Duration(tfUploads+1) * 15 * time.Second).Truncate(time.Second)
		for i := range tfUploads {
			p := typicalArenaProfile(int64(i))
			var buf bytes.Buffer
			if err := p.Write(&buf); err != nil {
				t.Fatal(err)
			}
			from := start.Add(time.Duration(i) * 15 * time.Second)
			u := &agent.Upload{AppName: app, Labels: map[string]string{"pod": "pod-0"}, Profile: "arena",
				From: from, Until: from.Add(15 * time.Second), Data: buf.Bytes()}
			waitUntil(ctx, t, "upload accepted", func() error { return py.Upload(ctx, u) })
		}
		var r result
		until := time.Now().Add(time.Minute)
		waitUntil(ctx, t, "series listed", func() error {
			n, err := seriesCount(ctx, srv.url, selector(app), start.Add(-time.Minute), until)
			r.series = n
			if err == nil && n == 0 {
				err = fmt.Errorf("no series")
			}
			return err
		})
		r.received = metricSum(t, srv.url, `pyroscope_distributor_received_decompressed_bytes_sum{tenant="anonymous",type="memory"}`)
		srv.stop(t) // flushes the head block to disk
		r.onDisk = dirSize(t, filepath.Join(dir, "data"))
		return r
	}
	with, without := measure(false), measure(true)
	if with.series != without.series {
		t.Errorf("series: %d with type frames, %d without; the frames must add none", with.series, without.series)
	}
	t.Logf("type frames: %d series with, %d without; decompressed bytes received %d with, %d without (%.1f%%); bytes on disk after the flush %d with, %d without (%+.1f%%), %d uploads of %d sites, %d types",
		with.series, without.series, with.received, without.received, 100*(float64(with.received)/float64(without.received)-1),
		with.onDisk, without.onDisk, 100*(float64(with.onDisk)/float64(without.onDisk)-1), tfUploads, tfSites, tfTypes)
}

// typicalArenaProfile builds an arena profile of tfSites sites with
// 10-frame stacks over tfTypes types, values varying with seed.
func typicalArenaProfile(seed int64) *profile.Profile {
	p := &profile.Profile{
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            102400,
		DefaultSampleType: "alloc_space",
		Comments:          []string{"arenaprof window=both"},
	}
	for _, st := range []string{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes", "alloc_samples/count", "alloc_tail/bytes"} {
		typ, unit, _ := bytes.Cut([]byte(st), []byte("/"))
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: string(typ), Unit: string(unit)})
	}
	fns := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := fns[name]; l != nil {
			return l
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "/src/app/" + name + ".go"}
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Address: 0x1000 + uint64(len(p.Location))*16, Line: []profile.Line{{Function: f, Line: 42}}}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, l)
		fns[name] = l
		return l
	}
	for i := range tfSites {
		var stack []*profile.Location
		stack = append(stack, loc(fmt.Sprintf("main.site%d", i)))
		for d := 1; d < tfDepth; d++ {
			stack = append(stack, loc(fmt.Sprintf("main.caller%d_%d", d, i%20)))
		}
		size := int64(16 + 8*(i%tfTypes))
		n := 1 + (seed+int64(i))%5
		p.Sample = append(p.Sample, &profile.Sample{
			Location: stack,
			Value:    []int64{n * 102400 / size, n * 102400, 0, 0, n, n * size / 2},
			Label:    map[string][]string{"type": {fmt.Sprintf("main.type%d", i%tfTypes)}},
			NumLabel: map[string][]int64{"bytes": {size}, "sampling_mean": {102400}},
			NumUnit:  map[string][]string{"bytes": {"bytes"}, "sampling_mean": {"bytes"}},
		})
	}
	return p
}

// seriesCount counts the series the server holds for sel
// (querier.v1.QuerierService/Series).
func seriesCount(ctx context.Context, base, sel string, from, until time.Time) (int, error) {
	body := fmt.Sprintf(`{"matchers":[%q],"start":%d,"end":%d}`, sel, from.UnixMilli(), until.UnixMilli())
	var resp struct {
		LabelsSet []struct{} `json:"labelsSet"`
	}
	if err := post(ctx, base+"/querier.v1.QuerierService/Series", body, &resp); err != nil {
		return 0, err
	}
	return len(resp.LabelsSet), nil
}

// metricSum reads one sample of the server's Prometheus metrics.
func metricSum(t *testing.T, base, name string) int64 {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("metric %s not found", name)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(v)
}

// dirSize sums the sizes of the files under dir.
func dirSize(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && d.Name() != "server.log" {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
