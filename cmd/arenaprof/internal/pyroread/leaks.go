package pyroread

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arenaprof/arenaprof/internal/groupkey"
	"github.com/arenaprof/arenaprof/internal/leaks"
	"github.com/arenaprof/arenaprof/internal/pprofmt"
)

// The in-use series of arenaprof leaks -pyroscope. In-use bytes are
// levels: the server's sum over a range adds up every upload in it. So,
// as ReadRSS does, each upload is read apart, as the points of a
// SelectSeries of inuse_space at a step of one millisecond: a point is
// one upload of one series. A first SelectSeries, grouped by every label
// at one step over the whole piece, lists the label sets and so the
// pods; the second groups the points by pod, kind and sampling mean
// alone. That gives each pod's totals per kind (heap, arena) at each
// upload, exactly, in two queries per profile type and piece of the
// range.
//
// A function's bytes need the stacks, which SelectSeries does not group
// by. The fit (internal/leaks) reads only the batch means of its window
// (the last half, at most leaks.MaxBatches batches), so ReadLeaks asks
// for the stacks once per batch, kind and pod: a SelectMergeProfile over
// the batch's uploads sums their in-use, divided by their count. It adds
// one query for the first snapshot and one for the last (the rows'
// inuse_first and inuse_last): at most MaxBatches+2 queries per pod and
// kind, whatever the range's length.

// inuseSuffix ends the profile type IDs of the agent's in-use bytes.
const inuseSuffix = ":inuse_space:bytes:space:bytes"

// LeaksQuery says what [Client.ReadLeaks] reads.
type LeaksQuery struct {
	// Selector chooses the series; without a matcher on memory it gets
	// memory=~"arena|heap".
	Selector Selector
	// From and To bound the time range.
	From, To time.Time
	// By groups the bytes: "func" (the leaf function) or "stack", read
	// from the stacks; "type" or "label=KEY", read from the series.
	By string
}

// LeaksRead is what ReadLeaks read: the series of each pod.
type LeaksRead struct {
	Pods []LeakPod
	// Queries is the number of queries sent.
	Queries int
	// Notes are what the read says of the pods left out.
	Notes []string
}

// LeakPod is the in-use series of one pod: a combination of the labels
// every series carries (service_name, pod, the agent's Config.Labels),
// the labels of the model (memory, bytes, memprofilerate, sampling_mean,
// arenaprof_var) and the arena samples' type left out.
type LeakPod struct {
	Labels map[string]string
	// Times are the snapshots: one upload of the pod, its heap and arena
	// profiles of one collection taken as one point in time.
	Times []time.Time
	// Read counts the snapshots read, before a restart too.
	Read int
	// Notes say where the series was cut.
	Notes []string
	// Total is the pod's in-use bytes (all kinds) at each snapshot.
	Total []float64
	// From is the index of the fit's first snapshot (leaks.Window).
	From   int
	Groups []LeakGroup
}

// LeakGroup is one group's series in a pod. Over the fit's window
// (snapshots From on) Y holds the batch mean of the snapshot's batch and
// V the sampling variance charged to it (see batchVariance); before it,
// Y and V are 0: the fit does not read them. First and Last are the
// group's bytes at the first and the last snapshot.
type LeakGroup struct {
	Kind, Key   string
	Y, V        []float64
	First, Last float64
}

// leakSeriesPoints is one SelectSeries series of in-use bytes: its
// labels, its kind, the type ID it was read from, its sampling mean
// (MemProfileRate for the Go heap) and its points.
type leakSeriesPoints struct {
	labels map[string]string
	kind   string
	typeID string
	mean   int64
	points map[int64]float64 // by millisecond
}

// modelOnly are the labels that are not a pod's: the model's and the
// arena samples' type.
var modelOnly = []string{pprofmt.LabelMemory, pprofmt.LabelBytes, pprofmt.LabelHeapRate, pprofmt.LabelMean, pprofmt.LabelVarFormat, pprofmt.LabelType}

// ParseLabelCount reads a numeric label the agent uploads as a string
// (bytes, memprofilerate, sampling_mean): a positive decimal integer.
func ParseLabelCount(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("label %s=%q is not a positive number of bytes", name, s)
	}
	return n, nil
}

// ReadLeaks reads the in-use series of every pod q selects, each split
// into snapshots and grouped by q.By (see the comment at the top of the
// file for the queries). A pod with fewer than leaks.MinSnapshots
// snapshots is left out, said in the notes; none with enough is an
// error.
func (c *Client) ReadLeaks(ctx context.Context, q LeaksQuery) (*LeaksRead, error) {
	rd, err := c.readLeaks(ctx, q)
	var se *ServerError
	if errors.As(err, &se) {
		// A server whose max_query_length is below MaxRange names it:
		// read again in pieces of that length, as Read does.
		if d, ok := queryLengthLimit(se.Message); ok && d < c.pieceLength() {
			c.maxRange = d
			return c.readLeaks(ctx, q)
		}
	}
	return rd, err
}

func (c *Client) readLeaks(ctx context.Context, q LeaksQuery) (*LeaksRead, error) {
	sel, err := memorySelector(q.Selector, q.From, q.To)
	if err != nil {
		return nil, err
	}
	chunks := splitRange(q.From, q.To, c.pieceLength()-time.Millisecond)
	out := &LeaksRead{}
	if need := len(chunks) * (2 + 2*len(typeNames)); need > c.maxRequests {
		return nil, &LimitError{Flag: FlagMaxRequests, Limit: int64(c.maxRequests), Suggest: int64(need),
			What: fmt.Sprintf("reading in-use series from %s over %s takes %d queries or more, above %s %d", c.base, q.To.Sub(q.From), need, FlagMaxRequests, c.maxRequests)}
	}
	ids, names, err := c.typesAndNames(ctx, sel, chunks)
	if err != nil {
		return nil, err
	}
	out.Queries += 2 * len(chunks)
	var inuse []string
	for _, n := range typeNames {
		if slices.Contains(ids, n+inuseSuffix) {
			inuse = append(inuse, n+inuseSuffix)
		}
	}
	span := fmt.Sprintf("%s from %s to %s", sel, q.From.UTC().Format(time.RFC3339), q.To.UTC().Format(time.RFC3339))
	if len(inuse) == 0 {
		has := "none"
		if len(ids) > 0 {
			has = strings.Join(ids, ", ")
		}
		return nil, fmt.Errorf("%w %s: no in-use bytes (inuse_space) stored; the profile types of it: %s", ErrNoData, span, has)
	}
	var groupBy []string
	for _, n := range names {
		if !strings.HasPrefix(n, "__") && !slices.Contains(groupBy, n) {
			groupBy = append(groupBy, n)
		}
	}
	slices.Sort(groupBy)
	// First the label sets, one point each (a step of the whole piece),
	// to tell the pods apart; then each upload's bytes by pod, kind and
	// mean alone: grouping the points by the heap's sizes and the arenas'
	// types too would multiply the answer by their number.
	var sets []map[string]string
	seen := map[string]bool{}
	for _, id := range inuse {
		for _, ch := range chunks {
			err := c.selectSeries(ctx, id, sel, ch[0], ch[1], groupBy, func(s series) error {
				m := map[string]string{}
				for k, v := range s.labels {
					if v != "" && !strings.HasPrefix(k, "__") {
						m[k] = v
					}
				}
				if k := seriesKey(m); !seen[k] {
					seen[k] = true
					sets = append(sets, m)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			out.Queries++
		}
	}
	podKeys := podLabelsOf(sets)
	pointsBy := append(slices.Clone(podKeys), pprofmt.LabelMemory, pprofmt.LabelHeapRate, pprofmt.LabelMean)
	keyLabel := seriesKeyLabel(q.By)
	if keyLabel != "" && !slices.Contains(pointsBy, keyLabel) {
		pointsBy = append(pointsBy, keyLabel)
	}
	var all []*leakSeriesPoints
	for _, id := range inuse {
		for _, ch := range chunks {
			got, err := c.leakSeries(ctx, id, sel, ch[0], ch[1], pointsBy)
			if err != nil {
				return nil, err
			}
			out.Queries++
			all = append(all, got...)
		}
	}
	pods := splitPods(all, podKeys, keyLabel)
	if len(pods) == 0 {
		return nil, fmt.Errorf("%w %s: the server lists %s but returned no point", ErrNoData, span, strings.Join(inuse, ", "))
	}
	type job struct {
		pod, kind  int
		batch      int // -1: the first snapshot, -2: the last
		ms         []int64
		want       float64
		snapshot   []int // the snapshots it covers
		typeID     string
		podMatcher Selector
	}
	var jobs []job
	var kept []*podSeries
	for _, p := range pods {
		if len(p.times) < leaks.MinSnapshots {
			out.Notes = append(out.Notes, fmt.Sprintf("pod %s: %d snapshots, fewer than the %d needed: not read", showLabels(p.labels), len(p.times), leaks.MinSnapshots))
			continue
		}
		kept = append(kept, p)
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%w %s: no pod has %d snapshots or more (%s)", ErrNoData, span, leaks.MinSnapshots, strings.Join(out.Notes, "; "))
	}
	if keyLabel != "" {
		// A label's bytes are the series' own: each snapshot's, exact, and
		// no stack is read.
		for _, p := range kept {
			lp, err := seriesGroups(p)
			if err != nil {
				return nil, err
			}
			out.Pods = append(out.Pods, lp)
		}
		return out, nil
	}
	for pi, p := range kept {
		secs := make([]float64, len(p.times))
		for i, t := range p.times {
			secs[i] = t.Sub(p.times[0]).Seconds()
		}
		from, err := leaks.Window(secs)
		if err != nil {
			return nil, fmt.Errorf("pod %s: %v", showLabels(p.labels), err)
		}
		p.from = from
		batches := Batches(len(p.times) - from)
		podSel := slices.Clone(sel)
		for _, k := range slices.Sorted(maps.Keys(p.labels)) {
			podSel = podSel.With(Matcher{k, "=", p.labels[k]})
		}
		for ki, kind := range p.kinds {
			ksel := podSel.With(Matcher{pprofmt.LabelMemory, "=", kind})
			add := func(batch int, snaps []int) {
				j := job{pod: pi, kind: ki, batch: batch, snapshot: snaps, podMatcher: ksel}
				for _, s := range snaps {
					for _, u := range p.uploads[ki][s] {
						j.ms = append(j.ms, u.ms)
						j.want += u.y
						j.typeID = u.typeID
					}
				}
				if len(j.ms) > 0 {
					jobs = append(jobs, j)
				}
			}
			add(-1, []int{0})
			for b := range batches[len(batches)-1] + 1 {
				var snaps []int
				for j, k := range batches {
					if k == b {
						snaps = append(snaps, from+j)
					}
				}
				add(b, snaps)
			}
			add(-2, []int{len(p.times) - 1})
		}
	}
	if need := out.Queries + len(jobs); need > c.maxRequests {
		return nil, &LimitError{Flag: FlagMaxRequests, Limit: int64(c.maxRequests), Suggest: int64(need),
			What: fmt.Sprintf("reading the stacks of %d pods' in-use series from %s takes %d queries, above %s %d", len(kept), c.base, need, FlagMaxRequests, c.maxRequests)}
	}
	results := make([]map[string]float64, len(jobs))
	var mu sync.Mutex
	err = c.each(ctx, len(jobs), func(ctx context.Context, i int) error {
		j := jobs[i]
		lo, hi := slices.Min(j.ms), slices.Max(j.ms)
		// One millisecond either side: the uploads of one series are
		// milliseconds apart at least, whatever the server's bounds.
		p, err := c.selectMergeProfile(ctx, j.typeID, j.podMatcher, time.UnixMilli(lo-1), time.UnixMilli(hi+1))
		if err != nil {
			return err
		}
		sums := map[string]float64{}
		var total float64
		for _, s := range p.Sample {
			if len(s.Value) == 0 || s.Value[0] == 0 {
				continue
			}
			s.Location = dropTypeFrames(s.Location)
			v := float64(s.Value[0])
			sums[groupkey.Of(q.By, s)] += v
			total += v
		}
		// The stacks must hold what the series do: a server that
		// truncates SelectMergeProfile would give short rows, silently.
		if total != j.want {
			return fmt.Errorf("SelectMergeProfile %s of %s from %d to %d ms: the stacks sum to %.0f bytes, the series of its %d uploads to %.0f: the server truncated or dropped stacks",
				j.typeID, j.podMatcher, lo-1, hi+1, total, len(j.ms), j.want)
		}
		n := float64(len(j.ms))
		for k := range sums {
			sums[k] /= n
		}
		mu.Lock()
		results[i] = sums
		mu.Unlock()
		return nil
	})
	out.Queries += len(jobs)
	if err != nil {
		return nil, err
	}
	groups := make([]map[string]*LeakGroup, len(kept))
	for i := range groups {
		groups[i] = map[string]*LeakGroup{}
	}
	for i, j := range jobs {
		p := kept[j.pod]
		kind := p.kinds[j.kind]
		for key, v := range results[i] {
			g := groups[j.pod][kind+"\x00"+key]
			if g == nil {
				g = &LeakGroup{Kind: kind, Key: key, Y: make([]float64, len(p.times)), V: make([]float64, len(p.times))}
				groups[j.pod][kind+"\x00"+key] = g
			}
			switch j.batch {
			case -1:
				g.First = v
			case -2:
				g.Last = v
			default:
				for _, s := range j.snapshot {
					g.Y[s] = v
					g.V[s] = batchVariance(p.mean[j.kind], v)
				}
			}
		}
	}
	for i, p := range kept {
		lp := LeakPod{Labels: p.labels, Times: p.times, Read: p.read, Notes: p.notes, Total: p.total, From: p.from}
		for _, k := range slices.Sorted(maps.Keys(groups[i])) {
			lp.Groups = append(lp.Groups, *groups[i][k])
		}
		out.Pods = append(out.Pods, lp)
	}
	return out, nil
}

// batchVariance is the sampling variance charged to each snapshot of a
// batch whose group's bytes average y, the kind's sampling mean (or
// MemProfileRate) being mean: the bound mean*y of Dispersion(size, mean)
// <= mean, since a function mixes sizes and its stacks carry none.
//
// Charging a batch's mean rather than each snapshot's variance keeps
// internal/leaks' sampling bound. Its slope weights are constant within a
// batch, so the sum of the weights from a snapshot on, S(j), is linear
// within one: an object born at a fraction 1-f into batch k, living to the
// end, truly adds v*(f*S(k)+(1-f)*S(k+1))^2 to the slope's variance (S(k)
// at the batch's first snapshot). Averaged over the batch it raises the
// batch's variance by f*v and the next one's by (1-f)*v, which the bound
// charges v*(f*S(k)^2+(1-f)*S(k+1)^2): no less, by the convexity of the
// square. Deaths are the same backwards. When the window has MaxBatches
// snapshots or fewer, a batch is one snapshot and nothing is averaged.
func batchVariance(mean int64, y float64) float64 { return float64(mean) * max(y, 0) }

// Batches returns the batch of each of the m snapshots of a fit, as
// internal/leaks' Estimator cuts them: min(m, MaxBatches) consecutive
// batches, snapshot j in batch j*B/m.
func Batches(m int) []int {
	nb := min(m, leaks.MaxBatches)
	out := make([]int, m)
	for j := range m {
		out[j] = j * nb / m
	}
	return out
}

// upload is one upload of a pod's kind: its millisecond, its bytes, the
// type ID it was read from, and its bytes by the grouping label's value
// when grouping by a label.
type upload struct {
	ms     int64
	y      float64
	typeID string
	byKey  map[string]float64
}

// seriesKeyLabel is the series label a grouping reads, "" for one read
// from the stacks.
func seriesKeyLabel(by string) string {
	if by == "type" {
		return pprofmt.LabelType
	}
	k, _ := strings.CutPrefix(by, "label=")
	if k == by {
		return ""
	}
	return k
}

// seriesGroups makes a pod's groups from the bytes of its uploads by the
// grouping label's value (groupkey.None where a series lacks it): each
// snapshot's value, its sampling variance bounded by mean*y as for the
// stacks (the label's series mix sizes).
func seriesGroups(p *podSeries) (LeakPod, error) {
	secs := make([]float64, len(p.times))
	for i, t := range p.times {
		secs[i] = t.Sub(p.times[0]).Seconds()
	}
	from, err := leaks.Window(secs)
	if err != nil {
		return LeakPod{}, fmt.Errorf("pod %s: %v", showLabels(p.labels), err)
	}
	lp := LeakPod{Labels: p.labels, Times: p.times, Read: p.read, Notes: p.notes, Total: p.total, From: from}
	groups := map[string]*LeakGroup{}
	for ki, kind := range p.kinds {
		for i, ups := range p.uploads[ki] {
			for _, u := range ups {
				for key, v := range u.byKey {
					g := groups[kind+"\x00"+key]
					if g == nil {
						g = &LeakGroup{Kind: kind, Key: key, Y: make([]float64, len(p.times)), V: make([]float64, len(p.times))}
						groups[kind+"\x00"+key] = g
					}
					g.Y[i] += v
					g.V[i] += batchVariance(p.mean[ki], v)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(groups)) {
		g := groups[k]
		g.First, g.Last = g.Y[0], g.Y[len(g.Y)-1]
		lp.Groups = append(lp.Groups, *g)
	}
	return lp, nil
}

// podSeries is one pod's snapshots while they are put together.
type podSeries struct {
	labels  map[string]string
	kinds   []string
	mean    []int64      // by kind: the highest sampling mean of its series
	uploads [][][]upload // by kind, by snapshot
	times   []time.Time
	total   []float64
	read    int
	notes   []string
	from    int
}

// leakSeries reads one in-use type's SelectSeries over [start, end] at a
// step of one millisecond, grouped by groupBy.
func (c *Client) leakSeries(ctx context.Context, typeID string, sel Selector, start, end time.Time, groupBy []string) ([]*leakSeriesPoints, error) {
	req, from, err := seriesRequest(typeID, sel, start, end, groupBy, rssStep)
	if err != nil {
		return nil, err
	}
	var out []*leakSeriesPoints
	err = c.call(ctx, "SelectSeries", "application/json", req, c.answerShare(), func(r io.Reader) error {
		var err error
		out, err = parseLeakSeries(r, typeID, from)
		return err
	})
	return out, c.answerErr(err)
}

// parseLeakSeries reads a SelectSeries answer of in-use bytes: each
// series' kind and sampling mean from its labels, and its points
// stamped after the given millisecond.
func parseLeakSeries(r io.Reader, typeID string, from int64) ([]*leakSeriesPoints, error) {
	var resp struct {
		Series []wireSeries `json:"series"`
	}
	if err := json.NewDecoder(r).Decode(&resp); err != nil && !errors.Is(err, errTooLong) {
		return nil, fmt.Errorf("SelectSeries: malformed answer: %v", err)
	} else if err != nil {
		return nil, err
	}
	var out []*leakSeriesPoints
	for _, ws := range resp.Series {
		s := &leakSeriesPoints{typeID: typeID, labels: map[string]string{}, points: map[int64]float64{}}
		for _, l := range ws.Labels {
			if l.Value != "" && !strings.HasPrefix(l.Name, "__") {
				s.labels[l.Name] = l.Value
			}
		}
		s.kind = s.labels[pprofmt.LabelMemory]
		meanLabel := pprofmt.LabelMean
		switch s.kind {
		case pprofmt.MemoryHeap:
			meanLabel = pprofmt.LabelHeapRate
		case pprofmt.MemoryArena:
		default:
			return nil, fmt.Errorf("SelectSeries %s: a series of memory=%q, neither heap nor arena (%s)", typeID, s.kind, showLabels(s.labels))
		}
		v, ok := s.labels[meanLabel]
		if !ok {
			return nil, fmt.Errorf("SelectSeries %s: the series %s has no label %s: uploaded by an agent of a release before it, whose sampling variance cannot be known", typeID, showLabels(s.labels), meanLabel)
		}
		var err error
		if s.mean, err = ParseLabelCount(meanLabel, v); err != nil {
			return nil, fmt.Errorf("SelectSeries %s: %v", typeID, err)
		}
		for _, pt := range ws.Points {
			if pt.Timestamp <= from || pt.Value == 0 {
				continue
			}
			if !(pt.Value >= 0 && pt.Value <= maxExact) || pt.Value != math.Trunc(pt.Value) {
				return nil, fmt.Errorf("SelectSeries: a point's value %g is not a number of bytes (negative, fractional or too large to be exact)", pt.Value)
			}
			s.points[pt.Timestamp] += pt.Value
		}
		if len(s.points) > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// podLabelsOf returns the labels every series (label set) carries, the
// model's left out: what tells the pods apart.
func podLabelsOf(all []map[string]string) []string {
	count := map[string]int{}
	for _, s := range all {
		for k := range s {
			count[k]++
		}
	}
	var out []string
	for k, n := range count {
		if n == len(all) && !slices.Contains(modelOnly, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// splitPods puts the series' points together by pod (its labels keys)
// and snapshot (by the value of keyLabel too, if not ""): per
// pod and kind, the uploads by millisecond, their bytes summed; the heap and the arena
// upload of one collection (less than a quarter of the pod's interval
// apart) make one snapshot. A gap of more than five intervals ends the
// series (a restart or an outage): the part after the last is kept, said.
func splitPods(all []*leakSeriesPoints, keys []string, keyLabel string) []*podSeries {
	type acc struct {
		labels map[string]string
		kinds  map[string]map[int64]upload
		mean   map[string]int64
	}
	byPod := map[string]*acc{}
	for _, s := range all {
		pl := map[string]string{}
		for _, k := range keys {
			pl[k] = s.labels[k]
		}
		pk := seriesKey(pl)
		a := byPod[pk]
		if a == nil {
			a = &acc{labels: pl, kinds: map[string]map[int64]upload{}, mean: map[string]int64{}}
			byPod[pk] = a
		}
		if a.kinds[s.kind] == nil {
			a.kinds[s.kind] = map[int64]upload{}
		}
		a.mean[s.kind] = max(a.mean[s.kind], s.mean)
		for ms, v := range s.points {
			u := a.kinds[s.kind][ms]
			u.ms, u.y, u.typeID = ms, u.y+v, s.typeID
			if keyLabel != "" {
				if u.byKey == nil {
					u.byKey = map[string]float64{}
				}
				key := s.labels[keyLabel]
				if key == "" {
					key = groupkey.None
				}
				u.byKey[key] += v
			}
			a.kinds[s.kind][ms] = u
		}
	}
	var out []*podSeries
	for _, pk := range slices.Sorted(maps.Keys(byPod)) {
		a := byPod[pk]
		p := &podSeries{labels: a.labels}
		type pt struct {
			ms   int64
			kind int
			u    upload
		}
		var pts []pt
		for _, kind := range slices.Sorted(maps.Keys(a.kinds)) {
			ki := len(p.kinds)
			p.kinds = append(p.kinds, kind)
			p.mean = append(p.mean, a.mean[kind])
			for ms, u := range a.kinds[kind] {
				pts = append(pts, pt{ms, ki, u})
			}
		}
		slices.SortFunc(pts, func(x, y pt) int { return cmp.Or(cmp.Compare(x.ms, y.ms), cmp.Compare(x.kind, y.kind)) })
		tol := interval(pts, func(x pt) (int64, int) { return x.ms, x.kind }) / 4
		var snaps [][]pt
		for _, x := range pts {
			n := len(snaps)
			if n > 0 && x.ms-snaps[n-1][0].ms <= tol && !slices.ContainsFunc(snaps[n-1], func(y pt) bool { return y.kind == x.kind }) {
				snaps[n-1] = append(snaps[n-1], x)
				continue
			}
			snaps = append(snaps, []pt{x})
		}
		p.read = len(snaps)
		gap := 5 * interval(pts, func(x pt) (int64, int) { return x.ms, x.kind })
		start := 0
		for i := 1; i < len(snaps); i++ {
			if d := snaps[i][0].ms - snaps[i-1][0].ms; gap > 0 && d > gap {
				p.notes = append(p.notes, fmt.Sprintf("pod %s: no upload for %s between %s and %s (a restart or an outage): the %d snapshots before it are not read",
					showLabels(p.labels), time.Duration(d)*time.Millisecond, time.UnixMilli(snaps[i-1][0].ms).UTC().Format("15:04:05.000"), time.UnixMilli(snaps[i][0].ms).UTC().Format("15:04:05.000"), i-start))
				start = i
			}
		}
		snaps = snaps[start:]
		p.uploads = make([][][]upload, len(p.kinds))
		for ki := range p.kinds {
			p.uploads[ki] = make([][]upload, len(snaps))
		}
		for i, sn := range snaps {
			p.times = append(p.times, time.UnixMilli(sn[0].ms).UTC())
			var total float64
			for _, x := range sn {
				p.uploads[x.kind][i] = append(p.uploads[x.kind][i], x.u)
				total += x.u.y
			}
			p.total = append(p.total, total)
		}
		out = append(out, p)
	}
	return out
}

// interval is the median time between consecutive points of one kind, in
// milliseconds (0 for fewer than two).
func interval[T any](pts []T, at func(T) (int64, int)) int64 {
	last := map[int]int64{}
	var d []int64
	for _, x := range pts {
		ms, k := at(x)
		if l, ok := last[k]; ok {
			d = append(d, ms-l)
		}
		last[k] = ms
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}

// showLabels formats labels as a selector does: {k="v", ...}.
func showLabels(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
