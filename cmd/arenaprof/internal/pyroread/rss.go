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
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/rss"
)

// The resident-memory profiles the agent uploads (its "rss" source) are
// levels read at one moment, so the server's sums over time mean
// nothing for them: ReadRSS reads each upload apart instead, as the
// points of a SelectSeries at a step of one millisecond, the server's
// resolution (it keeps one profile per series and millisecond, and both
// v1.19.3 and v2.2.1 answer only the steps that hold one). Pyroscope names
// a profile it does not know after its last sample type: pprof uploads are
// stored under the profile type resident:resident:bytes:space:bytes
// (resident/bytes being the last sample type); OTLP ones after their
// period type, which the agent sends as resident/bytes:
// resident:resident:bytes:resident:bytes. Uploads of earlier releases
// were stored as heap_samples:resident:bytes:space:bytes and
// space:resident:bytes:space:bytes. Every type ID whose sample type is
// resident/bytes is read (isRSSType); series without the class label are
// not the agent's, and left out.
const rssStep = time.Millisecond

// isRSSType reports whether a profile type ID (name:sample type:unit:
// period type:unit) is of resident bytes.
func isRSSType(id string) bool {
	parts := strings.Split(id, ":")
	return len(parts) == 5 && parts[1] == rss.SampleResident && parts[2] == "bytes"
}

// RSSSnapshot is one resident-memory upload of one series (a pod): its
// classes' bytes as uploaded.
type RSSSnapshot struct {
	// Series are the upload's series labels (the class label and
	// Pyroscope's own __ labels left out), e.g. service_name and pod.
	Series map[string]string `json:"series"`
	// Type is the profile type ID it was read from.
	Type string `json:"type"`
	// Time is the upload's time, to the millisecond.
	Time time.Time `json:"time"`
	// Classes holds each class's bytes (a class absent had none).
	Classes map[string]int64 `json:"classes"`
	// SmapsUnread marks an upload read without /proc/self/smaps: its
	// classes are the Go classes only, mapped bytes, not resident ones,
	// and do not sum to an RSS.
	SmapsUnread bool `json:"smaps_unread,omitempty"`
}

// RSS returns the sum of the snapshot's classes: its RSS when smaps was
// read.
func (s *RSSSnapshot) RSS() int64 {
	var sum int64
	for _, v := range s.Classes {
		sum += v
	}
	return sum
}

// RSSSite is the sum over the range of the uploaded bytes of one site
// (by its leaf function) of a class, over every snapshot read.
type RSSSite struct {
	Class string `json:"class"`
	Key   string `json:"key"`
	Sum   int64  `json:"sum"`
}

// RSSRead is what ReadRSS read.
type RSSRead struct {
	Snapshots []RSSSnapshot
	Sites     []RSSSite
}

// ErrNoRSS is returned, wrapped, when no resident-memory upload matches.
var ErrNoRSS = errors.New("no resident-memory (rss) uploads match")

// ReadRSS reads every resident-memory upload the selector matches in
// [from, to]: the classes of each (SelectSeries grouped by the class label
// and every series label, at a step of one millisecond), and the sums of the
// sites below the classes over the whole range (SelectMergeProfile). When
// none matches, the error (wrapping ErrNoRSS) lists the profile types the
// server holds for the selector.
func (c *Client) ReadRSS(ctx context.Context, sel Selector, from, to time.Time) (*RSSRead, error) {
	chunks := splitRange(from, to, c.pieceLength()-time.Millisecond)
	if need := 2 * len(chunks) * 3; need > c.maxRequests { // names, then each of two types' series and stacks
		return nil, &LimitError{Flag: FlagMaxRequests, Limit: int64(c.maxRequests), Suggest: int64(need),
			What: fmt.Sprintf("reading resident memory from %s over %s takes up to %d queries, above %s %d", c.base, to.Sub(from), need, FlagMaxRequests, c.maxRequests)}
	}
	ids, names, err := c.typesAndNames(ctx, sel, chunks)
	if err != nil {
		return nil, err
	}
	var rssIDs []string
	for _, id := range ids {
		if isRSSType(id) {
			rssIDs = append(rssIDs, id)
		}
	}
	if len(rssIDs) == 0 {
		if len(ids) == 0 {
			apps, err := c.labelValues(ctx, "service_name", Selector{{Name: "service_name", Op: "=~", Value: ".+"}}, from, to)
			if err != nil {
				return nil, err
			}
			has := "none"
			if len(apps) > 0 {
				has = strings.Join(apps[:min(len(apps), 20)], ", ")
				if len(apps) > 20 {
					has += fmt.Sprintf(" and %d more", len(apps)-20)
				}
			}
			return nil, fmt.Errorf("%w %s from %s to %s: the server holds no profile of it in the range; its services then: %s", ErrNoRSS, sel, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), has)
		}
		return nil, fmt.Errorf("%w %s from %s to %s: the server holds these profile types of it: %s (an agent uploads resident memory when its Profiles name \"rss\")",
			ErrNoRSS, sel, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), strings.Join(ids, ", "))
	}
	groupBy := []string{pprofmt.LabelClass}
	for _, n := range names {
		if !strings.HasPrefix(n, "__") && n != pprofmt.LabelClass && n != pprofmt.LabelBytes && n != pprofmt.LabelHeapRate && !slices.Contains(groupBy, n) {
			groupBy = append(groupBy, n)
		}
	}
	out := &RSSRead{}
	snaps := map[string]*RSSSnapshot{}
	sites := map[[2]string]*RSSSite{}
	for _, id := range rssIDs {
		for _, ch := range chunks {
			piece := map[string]*RSSSnapshot{}
			if err := c.rssSeries(ctx, id, sel, ch[0], ch[1], groupBy, piece); err != nil {
				return nil, err
			}
			series := map[string]int64{}
			for k, s := range piece {
				snaps[k] = s
				for class, v := range s.Classes {
					series[class] += v
				}
			}
			p, err := c.selectMergeProfile(ctx, id, sel, ch[0], ch[1])
			if err != nil {
				return nil, err
			}
			stacks := map[string]int64{}
			for _, s := range p.Sample {
				class, key := rssSiteOf(s.Location)
				if class == "" || len(s.Value) == 0 {
					continue
				}
				stacks[class] += s.Value[0]
				if key == "" {
					continue
				}
				k := [2]string{class, key}
				if sites[k] == nil {
					sites[k] = &RSSSite{Class: class, Key: key}
				}
				sites[k].Sum += s.Value[0]
			}
			// The stacks must hold what the series do: a server that
			// truncates SelectMergeProfile (max_flamegraph_nodes) would
			// give short rows, silently.
			for _, class := range rss.Classes {
				if stacks[class] != series[class] {
					return nil, fmt.Errorf("SelectMergeProfile %s of %s from %s to %s: the stacks of class %s sum to %d bytes, its series to %d: the server truncated or dropped stacks",
						id, sel, ch[0].UTC().Format(time.RFC3339), ch[1].UTC().Format(time.RFC3339), class, stacks[class], series[class])
				}
			}
		}
	}
	for _, s := range snaps {
		out.Snapshots = append(out.Snapshots, *s)
	}
	slices.SortFunc(out.Snapshots, func(a, b RSSSnapshot) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(seriesKey(a.Series), seriesKey(b.Series)), strings.Compare(a.Type, b.Type))
	})
	for _, s := range sites {
		out.Sites = append(out.Sites, *s)
	}
	slices.SortFunc(out.Sites, func(a, b RSSSite) int {
		return cmp.Or(cmp.Compare(slices.Index(rss.Classes[:], a.Class), slices.Index(rss.Classes[:], b.Class)), cmp.Compare(b.Sum, a.Sum), strings.Compare(a.Key, b.Key))
	})
	if len(out.Snapshots) == 0 {
		return nil, fmt.Errorf("%w %s from %s to %s: the server lists %s but returned no point", ErrNoRSS, sel, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), strings.Join(rssIDs, ", "))
	}
	return out, nil
}

// seriesKey identifies a snapshot's series.
func seriesKey(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, m[k])
	}
	return b.String()
}

// rssSiteOf returns the class of a merged sample's stack (its deepest
// class frame, the class frames being at the root) and its site's leaf
// function ("" for none).
func rssSiteOf(locs []*profile.Location) (class, key string) {
	depth := -1
	for i := len(locs) - 1; i >= 0; i-- {
		name := locationName(locs[i])
		if !isClassPath(name) {
			break
		}
		if slices.Contains(rss.Classes[:], name) {
			class, depth = name, i
		}
	}
	if depth <= 0 {
		return class, ""
	}
	return class, locationName(locs[0])
}

// locationName is the function of a location's leaf line.
func locationName(l *profile.Location) string {
	if len(l.Line) == 0 || l.Line[0].Function == nil {
		return ""
	}
	return l.Line[0].Function.Name
}

// isClassPath reports whether name is a class or a prefix of one's path
// (go, go/heap, arena).
func isClassPath(name string) bool {
	for _, c := range rss.Classes {
		if c == name || strings.HasPrefix(c, name+"/") {
			return true
		}
	}
	return false
}

// rssSeries adds the points of one profile type's SelectSeries over
// [start, end] to the snapshots, by series and millisecond.
func (c *Client) rssSeries(ctx context.Context, typeID string, sel Selector, start, end time.Time, groupBy []string, snaps map[string]*RSSSnapshot) error {
	req, from, err := seriesRequest(typeID, sel, start, end, groupBy, rssStep)
	if err != nil {
		return err
	}
	err = c.call(ctx, "SelectSeries", "application/json", req, c.answerShare(), func(r io.Reader) error {
		return addRSSPoints(r, typeID, from, snaps)
	})
	return c.answerErr(err)
}

// addRSSPoints reads a SelectSeries answer (Connect JSON) of a
// resident-memory type and adds its points stamped after the given
// millisecond to the snapshots, by series and millisecond.
func addRSSPoints(r io.Reader, typeID string, from int64, snaps map[string]*RSSSnapshot) error {
	var resp struct {
		Series []wireSeries `json:"series"`
	}
	if err := json.NewDecoder(r).Decode(&resp); err != nil && !errors.Is(err, errTooLong) {
		return fmt.Errorf("SelectSeries: malformed answer: %v", err)
	} else if err != nil {
		return err
	}
	for _, ws := range resp.Series {
		labels := map[string]string{}
		var class string
		unread := false
		for _, l := range ws.Labels {
			switch l.Name {
			case pprofmt.LabelClass:
				class = l.Value
			case pprofmt.LabelSmaps:
				unread = l.Value == pprofmt.SmapsUnread
			default:
				if l.Value != "" {
					labels[l.Name] = l.Value
				}
			}
		}
		if class == "" {
			continue // not the agent's: no class label
		}
		if !slices.Contains(rss.Classes[:], class) {
			return fmt.Errorf("SelectSeries: a resident-memory series of class %q, which is none of arenaprof's", class)
		}
		sk := seriesKey(labels)
		for _, pt := range ws.Points {
			if pt.Timestamp <= from || pt.Value == 0 {
				continue // before the range; a class of no bytes
			}
			if !(pt.Value >= 0 && pt.Value <= maxExact) || pt.Value != math.Trunc(pt.Value) {
				return fmt.Errorf("SelectSeries: a point's value %g is not a number of bytes (negative, fractional or too large to be exact)", pt.Value)
			}
			k := fmt.Sprintf("%s\x00%s\x00%d", typeID, sk, pt.Timestamp)
			s := snaps[k]
			if s == nil {
				s = &RSSSnapshot{Series: labels, Type: typeID, Time: time.UnixMilli(pt.Timestamp).UTC(), Classes: map[string]int64{}}
				snaps[k] = s
			}
			s.Classes[class] += int64(pt.Value)
			s.SmapsUnread = s.SmapsUnread || unread
		}
	}
	return nil
}
