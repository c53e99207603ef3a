package main

import (
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/groupkey"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/report"
)

// leakSeries is the in-use bytes of every group at each point in time of
// a series of snapshots, after the last restart.
type leakSeries struct {
	times  []time.Time
	groups map[string]*leakGroup // by kind, NUL, key
	total  []float64             // all groups' bytes at each point
	read   int                   // points read in all, before restarts too
	notes  []string              // the restarts, said
	// leaked is a service's leaked goroutine count read with each point
	// (leaks_join.go), nil when not read; leakedNote says why not.
	leaked     []float64
	leakedNote string
}

// leakGroup is one group's series: its estimated bytes in use and their
// sampling variances at each point (zero where it had no sample).
type leakGroup struct {
	kind, key string
	y, v      []float64
}

// leakFile is what one snapshot file adds to the series.
type leakFile struct {
	src        string
	at         time.Time // its point in time
	kind       string    // "heap" or "arena": the memory it holds (combined: "arena")
	start      time.Time // the start of a delta profile's window; zero for a cumulative one
	cumulative float64   // a runtime heap profile's allocated bytes (cumulative), -1 otherwise
}

func (s *leakSeries) seconds() []float64 {
	t := make([]float64, len(s.times))
	for i, x := range s.times {
		t[i] = x.Sub(s.times[0]).Seconds()
	}
	return t
}

func (s *leakSeries) span() time.Duration { return s.times[len(s.times)-1].Sub(s.times[0]) }

// describeSpan is the heading's "2026-11-27 06:00:00 to 06:10:00 UTC (10m0s)".
func (s *leakSeries) describeSpan() string {
	from, to := s.times[0].UTC(), s.times[len(s.times)-1].UTC()
	end := to.Format("2006-01-02 15:04:05")
	if to.Format("20060102") == from.Format("20060102") {
		end = to.Format("15:04:05")
	}
	return fmt.Sprintf("%s to %s UTC (%s)", from.Format("2006-01-02 15:04:05"), end, spanString(s.span()))
}

// readLeakSeries reads the in-use snapshots files (expandInputs' list, a
// directory's and a glob's in name order: Config.Dir's names start with
// the time) grouped by by. Files at one time (an upload's heap and arena
// profiles) make one point; a restart before a file starts the series
// again from it, said in a note. Each file is read within lim and
// dropped: the series keeps two numbers per group and point. Files are
// read and grouped on every core, a few ahead of the one added.
func readLeakSeries(files []string, by string, lim report.ParseOptions) (*leakSeries, error) {
	lim = withDefaults(lim)
	s := &leakSeries{groups: map[string]*leakGroup{}}
	var (
		prev      map[string]leakFile // the last file of each kind
		prevAny   leakFile
		pointKind map[string]bool // the kinds in the current point
	)
	snaps := readLeakSnapshots(files, by, lim)
	defer snaps.stop()
	for i := range files {
		sn := snaps.next(i)
		if sn.err != nil {
			return nil, sn.err
		}
		f := sn.file
		if len(s.times) > 0 {
			if why := restart(prevAny, prev[f.kind], f); why != "" {
				s.notes = append(s.notes, fmt.Sprintf("restart between %s and %s (%s): the %d snapshots before it are not read", prevAny.src, f.src, why, len(s.times)))
				s.times, s.total, s.groups, prev = nil, nil, map[string]*leakGroup{}, nil
			}
		}
		n := len(s.times)
		switch {
		case n > 0 && f.at.Equal(s.times[n-1]) && !pointKind[f.kind]:
			pointKind[f.kind] = true // one upload's other profile
		case n > 0 && f.at.Equal(s.times[n-1]):
			// Config.Dir names a second upload ending in the same
			// millisecond (the agent's last, at Stop) NAME-2: a level
			// of the same moment, read once.
			s.notes = append(s.notes, fmt.Sprintf("%s is a %s snapshot of the same millisecond as %s: not read", f.src, f.kind, prev[f.kind].src))
			continue
		default:
			s.times = append(s.times, f.at)
			s.total = append(s.total, 0)
			s.read++
			pointKind = map[string]bool{f.kind: true}
		}
		s.add(sn.values, len(s.times)-1)
		if prev == nil {
			prev = map[string]leakFile{}
		}
		prev[f.kind], prevAny = f, f
	}
	if len(s.times) < leaks.MinSnapshots {
		after := ""
		if len(s.notes) > 0 {
			after = " after the last restart"
		}
		return nil, topInputErr("%d snapshots%s: at least %d are needed (the fit covers the last half, 4 at least); give %d more", len(s.times), after, leaks.MinSnapshots, leaks.MinSnapshots-len(s.times))
	}
	for _, g := range s.groups {
		for len(g.y) < len(s.times) {
			g.y, g.v = append(g.y, 0), append(g.v, 0)
		}
	}
	return s, nil
}

// leakSnapshot is one file read: what it is, its groups' values, or the
// error that refuses it.
type leakSnapshot struct {
	file   leakFile
	values []leakValue
	err    error
}

// leakValue is one group's in-use bytes in a snapshot and their sampling
// variance; id is its kind, NUL, its key.
type leakValue struct {
	id   string
	y, v float64
}

// leakReader reads the files of a series on every core, in order of
// need: at most ahead files past the one being added are held.
type leakReader struct {
	out  []chan leakSnapshot
	done chan struct{}
	free chan struct{} // a token per file that may be read ahead
}

func readLeakSnapshots(files []string, by string, lim report.ParseOptions) *leakReader {
	workers := runtime.GOMAXPROCS(0)
	r := &leakReader{out: make([]chan leakSnapshot, len(files)), done: make(chan struct{}), free: make(chan struct{}, 2*workers)}
	for i := range r.out {
		r.out[i] = make(chan leakSnapshot, 1)
	}
	for range cap(r.free) {
		r.free <- struct{}{}
	}
	jobs := make(chan int)
	go func() {
		defer close(jobs)
		for i := range files {
			select {
			case <-r.free:
			case <-r.done:
				return
			}
			select {
			case jobs <- i:
			case <-r.done:
				return
			}
		}
	}()
	for range workers {
		go func() {
			for i := range jobs {
				r.out[i] <- readLeakSnapshot(files[i], by, lim)
			}
		}()
	}
	return r
}

// next waits for file i's snapshot and lets one more file be read ahead.
func (r *leakReader) next(i int) leakSnapshot {
	sn := <-r.out[i]
	r.free <- struct{}{}
	return sn
}

// stop ends the reading: the files not yet read are not.
func (r *leakReader) stop() { close(r.done) }

// readLeakSnapshot reads one file and groups its samples.
func readLeakSnapshot(src, by string, lim report.ParseOptions) leakSnapshot {
	p, shown, err := readLeakProfile(src, lim)
	if err != nil {
		return leakSnapshot{err: err}
	}
	f, facts, err := leakFileOf(shown, p)
	if err != nil {
		return leakSnapshot{err: err}
	}
	values, err := groupValues(p, facts, shown, by)
	return leakSnapshot{file: f, values: values, err: err}
}

// oneProcess refuses files of Config.Dir that name more than one
// application or set of labels (the pods of a fleet writing to one
// directory): their snapshots interleave in time and are no one series.
func oneProcess(files []string) error {
	var seen []string
	for _, f := range files {
		name := filepath.Base(f)
		kind, ok := dirFileKind(name)
		if !ok {
			continue
		}
		rest := strings.TrimSuffix(name[len(dirTimeLayout)+1:], ".pb.gz")
		proc := rest[:strings.LastIndex(rest, "-"+kind)]
		if !slices.Contains(seen, proc) {
			seen = append(seen, proc)
		}
	}
	if len(seen) < 2 {
		return nil
	}
	named := seen[:min(3, len(seen))]
	return topInputErr("the inputs hold the snapshots of %d applications or label sets (%s%s): one series is one process; give one's files, e.g. with a quoted glob '*-%s-*.pb.gz'",
		len(seen), strings.Join(named, ", "), map[bool]string{true: ", ...", false: ""}[len(seen) > 3], seen[0])
}

// readLeakProfile reads one snapshot within lim.
func readLeakProfile(src string, lim report.ParseOptions) (*profile.Profile, string, error) {
	ps, err := openProfileSource(src)
	if err != nil {
		return nil, "", err
	}
	defer ps.close()
	p, _, err := pprofread.Read(ps.r, pprofread.Options(lim))
	if err != nil {
		return nil, ps.shown, parseErr(ps, err, lim)
	}
	return p, ps.shown, nil
}

// leakFileOf checks that p, read from src, is an in-use snapshot and
// says when it was taken and what it holds.
func leakFileOf(src string, p *profile.Profile) (leakFile, *pprofmt.Facts, error) {
	f := leakFile{src: src, kind: pprofmt.MemoryArena, cumulative: -1}
	facts, err := checkArena(src, p)
	if err != nil {
		return f, nil, err
	}
	switch {
	case facts.Kind == pprofmt.KindHoldings:
		return f, nil, topInputErr("%s is a live-arenas profile: leaks reads sampled in-use snapshots (the agent's heap and arena uploads, runtime/pprof heap profiles)", src)
	case facts.Peak:
		return f, nil, topInputErr("%s is a peak profile, the state at the highest RSS, not one of a series: leaks reads the agent's heap and arena uploads or runtime/pprof heap profiles", src)
	case facts.Kind == pprofmt.KindGoHeap && strings.HasPrefix(p.DefaultSampleType, "alloc_"):
		return f, nil, topInputErr("%s is a cumulative allocation profile (its sample type is %s: runtime/pprof's allocs profile): leaks needs in-use snapshots; take the heap profile (/debug/pprof/heap) instead", src, p.DefaultSampleType)
	case facts.Heap[3] < 0:
		return f, nil, topInputErr("%s holds no in-use bytes (its sample types are %s): leaks needs in-use snapshots with inuse_space", src, strings.Join(facts.TypeNames, ", "))
	}
	if facts.Kind == pprofmt.KindGoHeap || (facts.HeapSamples && onlyHeap(p)) {
		f.kind = pprofmt.MemoryHeap
	}
	if facts.Kind == pprofmt.KindGoHeap && p.DurationNanos <= 0 && facts.Heap[1] >= 0 {
		f.cumulative = 0
		for _, smp := range p.Sample {
			f.cumulative += float64(smp.Value[facts.Heap[1]])
		}
	}
	if p.TimeNanos > 0 && p.DurationNanos > 0 {
		f.start = time.Unix(0, p.TimeNanos)
	}
	// Config.Dir names a file by its upload's end: one upload's heap and
	// arena profiles share it to the millisecond.
	if kind, ok := dirFileKind(filepath.Base(src)); ok && memoryKinds[kind] {
		if at, err := time.Parse(dirTimeLayout, filepath.Base(src)[:len(dirTimeLayout)]); err == nil {
			f.at = at
			return f, facts, nil
		}
	}
	if p.TimeNanos <= 0 {
		return f, nil, topInputErr("%s records no time: leaks needs each snapshot's time (runtime/pprof and arenaprof profiles record it)", src)
	}
	f.at = time.Unix(0, p.TimeNanos+max(p.DurationNanos, 0)).UTC()
	return f, facts, nil
}

// onlyHeap reports whether every sample of an arenaprof profile is a Go
// heap sample (the agent's heap upload).
func onlyHeap(p *profile.Profile) bool {
	for _, s := range p.Sample {
		if v := s.Label[pprofmt.LabelMemory]; len(v) == 0 || v[0] != pprofmt.MemoryHeap {
			return false
		}
	}
	return true
}

// restart says why f cannot follow the snapshots before it in one
// process ("" when it can): last is the file before it, same the last of
// its kind (zero if none).
func restart(last, same leakFile, f leakFile) string {
	if f.at.Before(last.at) {
		return "time goes back: another process, or files whose names do not sort by time (a directory and a glob are read in name order)"
	}
	if same.src == "" {
		return ""
	}
	if !f.start.IsZero() && !same.at.IsZero() {
		// Consecutive uploads of one agent: each window starts where
		// the last ended.
		gap := f.start.Sub(same.at)
		tol := max(2*time.Second, f.at.Sub(f.start)/2)
		switch {
		case gap > tol:
			return fmt.Sprintf("its window starts %s after the last one ended", spanString(gap))
		case gap < -tol:
			return fmt.Sprintf("its window starts %s before the last one ended: another process", spanString(-gap))
		}
	}
	if f.cumulative >= 0 && same.cumulative >= 0 && f.cumulative < same.cumulative {
		return "the cumulative allocations fell"
	}
	return ""
}

// groupValues sums the in-use bytes of p's samples (facts f), read from
// src, by group, with their sampling variances: an estimate of Y bytes of
// objects of S bytes sampled at mean R has variance
// Y*leaks.Dispersion(S, R).
func groupValues(p *profile.Profile, facts *pprofmt.Facts, src, by string) ([]leakValue, error) {
	in, objs := facts.Heap[3], facts.Heap[2]
	index := map[string]int{}
	var out []leakValue
	for _, smp := range p.Sample {
		y := float64(smp.Value[in])
		if y == 0 {
			continue
		}
		if y < 0 {
			return nil, topInputErr("%s: a sample's inuse_space is %v", src, y)
		}
		kind, mean := pprofmt.MemoryArena, p.Period
		if facts.Kind == pprofmt.KindGoHeap {
			kind = pprofmt.MemoryHeap
		} else if v := smp.Label[pprofmt.LabelMemory]; len(v) > 0 && v[0] == pprofmt.MemoryHeap {
			kind = pprofmt.MemoryHeap
			if r := smp.NumLabel[pprofmt.LabelHeapRate]; len(r) > 0 {
				mean = r[0]
			}
		} else if m := smp.NumLabel[pprofmt.LabelMean]; len(m) > 0 {
			mean = m[0]
		}
		mean = max(mean, 1)
		var size int64
		if b := smp.NumLabel[pprofmt.LabelBytes]; len(b) > 0 {
			size = b[0]
		} else if facts.Kind == pprofmt.KindGoHeap && objs >= 0 && smp.Value[objs] > 0 {
			// runtime/pprof writes a record per object size: its
			// bytes over its objects are the size. An arenaprof sample
			// without a size mixes sizes and is charged the mean.
			size = int64(math.Round(y / float64(smp.Value[objs])))
		}
		id := kind + "\x00" + groupkey.Of(by, smp)
		j, ok := index[id]
		if !ok {
			j = len(out)
			index[id] = j
			out = append(out, leakValue{id: id})
		}
		out[j].y += y
		out[j].v += y * leaks.Dispersion(size, mean)
	}
	return out, nil
}

// add adds a snapshot's group values to the series at point i.
func (s *leakSeries) add(values []leakValue, i int) {
	for _, x := range values {
		g := s.groups[x.id]
		if g == nil {
			kind, key, _ := strings.Cut(x.id, "\x00")
			g = &leakGroup{kind: kind, key: key}
			s.groups[x.id] = g
		}
		for len(g.y) <= i {
			g.y, g.v = append(g.y, 0), append(g.v, 0)
		}
		g.y[i] += x.y
		g.v[i] += x.v
		s.total[i] += x.y
	}
}
