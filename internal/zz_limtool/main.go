package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/export/agent"
)

func prof(types int) *profile.Profile {
	p := &profile.Profile{PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"}, Period: 102400}
	for _, st := range [][2]string{{"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"}, {"inuse_space", "bytes"}, {"alloc_samples", "count"}, {"alloc_tail", "bytes"}} {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: st[0], Unit: st[1]})
	}
	f := &profile.Function{ID: 1, Name: "main.f", Filename: "/a.go"}
	l := &profile.Location{ID: 1, Line: []profile.Line{{Function: f, Line: 3}}}
	p.Function, p.Location = []*profile.Function{f}, []*profile.Location{l}
	for i := range types {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{3200, 102400, 0, 0, 1, 16},
			Label: map[string][]string{"type": {fmt.Sprintf("main.t%d", i)}}, NumLabel: map[string][]int64{"sampling_mean": {102400}, "bytes": {32}}})
	}
	return p
}

func main() {
	py, _ := agent.NewPyroscope(agent.PyroscopeConfig{URL: "http://127.0.0.1:24240"})
	end := time.Now().Truncate(time.Minute)
	for i := range 20 {
		p := prof(3 + i)
		var buf bytes.Buffer
		p.Write(&buf)
		from := end.Add(-5*time.Hour + time.Duration(i)*15*time.Minute)
		err := py.Upload(context.Background(), &agent.Upload{AppName: "lim", Profile: "arena", From: from, Until: from.Add(15 * time.Second), Data: buf.Bytes(), SampleTypes: agent.SampleTypes(p)})
		ok, _ := agent.IsRetryable(err)
		fmt.Println(i, 3+i, "types", err, "retryable", ok)
	}
}
