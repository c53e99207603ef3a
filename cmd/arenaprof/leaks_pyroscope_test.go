package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/arenaprof/arenaprof/cmd/arenaprof/internal/pyroread"
)

// fleetRead is a read of two pods: a leaks main.leak at 2,048 B/s beside
// a flat main.cache, b has main.cache and a sawtooth main.churn.
func fleetRead() *pyroread.LeaksRead {
	t0 := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	pod := func(name string, n int, groups map[string]func(i int) float64) pyroread.LeakPod {
		p := pyroread.LeakPod{Labels: map[string]string{"service_name": "shop", "pod": name}, Read: n}
		for i := range n {
			p.Times = append(p.Times, t0.Add(time.Duration(i)*time.Second))
			p.Total = append(p.Total, 0)
		}
		p.From = n / 2
		for _, key := range []string{"main.cache", "main.churn", "main.leak"} {
			y := groups[key]
			if y == nil {
				continue
			}
			g := pyroread.LeakGroup{Kind: "arena", Key: key, Y: make([]float64, n), V: make([]float64, n), First: y(0), Last: y(n - 1)}
			for i := range n {
				g.Y[i], g.V[i] = y(i), 64*y(i)
				p.Total[i] += y(i)
			}
			p.Groups = append(p.Groups, g)
		}
		return p
	}
	return &pyroread.LeaksRead{Queries: 75, Pods: []pyroread.LeakPod{
		pod("a", 40, map[string]func(int) float64{
			"main.leak":  func(i int) float64 { return 2048 * float64(i+1) },
			"main.cache": func(int) float64 { return 10_000 },
		}),
		pod("b", 40, map[string]func(int) float64{
			"main.cache": func(int) float64 { return 10_000 },
			"main.churn": func(i int) float64 { return 3000 + 2000*float64(i%2) },
		}),
	}}
}

// TestLeaksFleet: the groups of all pods are one Bonferroni family; the
// rows name their pod (-json: "pod"), the heading says which pod leaks.
func TestLeaksFleet(t *testing.T) {
	f, err := fitLeaksFleet(fleetRead(), 0.95, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.groups != 4 || f.flagged != 1 {
		t.Fatalf("%d groups, %d flagged; want 4 and 1", f.groups, f.flagged)
	}
	top := f.rows[0]
	if top.Key != "main.leak" || top.Pod["pod"] != "a" || !top.Flagged || !(top.Lo <= 2048 && 2048 <= top.Hi) || top.InUseFirst != 2048 || top.InUseLast != 40*2048 {
		t.Errorf("first row %+v: want pod a's main.leak flagged, its interval covering 2048 B/s", top)
	}
	for _, r := range f.rows[1:] {
		if r.Flagged {
			t.Errorf("row %+v flagged", r)
		}
	}
	o := leaksOptions{by: "func", conf: 0.95, limit: 1 << 30}
	var out bytes.Buffer
	writeLeaksFleet(&out, f, f.rows, o, `{service_name="shop"}`)
	for _, want := range []string{
		"2 pods of {service_name=\"shop\"}",
		"75 queries",
		"pod pod=a: 40 snapshots over 39s; LEAKS: 1 group flagged",
		"pod pod=b: 40 snapshots over 39s; no group flagged",
		"95% intervals for the 4 groups of all pods together (Bonferroni)",
		"flagged (LEAK) when the lower bound is above 0: 1 of 4 groups",
		"POD",
		"pod=a  LEAK  main.leak",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLeaksPyroscopeArgs: -pyroscope takes one selector, groups by func
// or stack, and refuses the service's flags and the page.
func TestLeaksPyroscopeArgs(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"leaks", "-pyroscope", "http://127.0.0.1:1", "-seconds", "10", `{service_name="a"}`}, "-seconds and -every take a service's base URL"},
		{[]string{"leaks", "-pyroscope", "http://127.0.0.1:1", "-by", "size", `{service_name="a"}`}, "the fleet's groups are by func, stack, type or label=KEY"},
		{[]string{"leaks", "-pyroscope", "http://127.0.0.1:1", `{service_name="a"}`, `{service_name="b"}`}, "2 arguments where one SELECTOR was expected"},
		{[]string{"leaks", "-pyroscope", "http://127.0.0.1:1"}, "no SELECTOR"},
		{[]string{"leaks", "-pyroscope", "http://127.0.0.1:1", `service_name="a"`}, "bad label selector"},
		{[]string{"html", "-leaks", "-pyroscope", "http://127.0.0.1:1", `{service_name="a"}`}, "-pyroscope does not apply yet"},
		{[]string{"leaks", "-from", "-1h", "dir"}, "-from is for -pyroscope"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if code := run(tt.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("arenaprof %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, errOut.String(), tt.want)
		}
	}
}

// TestLeaksFleetJSON: -json's rows carry their pod's labels, and pods
// list each pod.
func TestLeaksFleetJSON(t *testing.T) {
	f, err := fitLeaksFleet(fleetRead(), 0.95, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeJSON(&out, leaksFleetJSON{leaksJSON: leaksJSON{Rows: f.rows, Goroutines: []goroutineLeakRow{}}, Pods: f.pods, Queries: 75}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Key string
			Pod map[string]string
		}
		Pods []struct {
			Labels  map[string]string
			Flagged int
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 4 || got.Rows[0].Pod["pod"] != "a" || len(got.Pods) != 2 || got.Pods[0].Flagged != 1 || got.Pods[1].Flagged != 0 {
		t.Errorf("JSON %s", out.String())
	}
}
