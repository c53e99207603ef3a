// Package samplingstate holds the process-wide sampling state that package
// hooks configures and allocators read: the mean in force, whether any
// consumer listens, and the record of every mean configured, so that a
// profile can list the means in force during its window.
//
// Package hooks is its only writer ([SetMean], [SetListening]);
// allocators read [Current] in their slow path and the profiler reads
// [Epoch] and [MeansSince].
package samplingstate

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultMeanBytes is the sampling mean in force until hooks.SetMeanBytes
// changes it: on average one sampled byte per 100 KiB allocated, the value
// .NET uses for its AllocationSampled events.
const DefaultMeanBytes = 102400

// MaxMeanBytes is the largest mean accepted anywhere in arenaprof (2^40
// bytes).
const MaxMeanBytes = 1 << 40

// State is the sampling configuration allocators read in their slow path.
// A State is immutable; every change installs a new one, so an allocator
// can detect a change by comparing the pointer it last saw with [Current].
type State struct {
	// MeanBytes is the mean distance between sampled bytes, or 0 when
	// sampling is off (no consumer, or a mean <= 0 was set).
	MeanBytes int64
	// TrialMeanBytes is the mean of the trial streams allocators keep
	// running: the configured mean even while no consumer is registered,
	// so that every byte allocated after a consumer registers gets its
	// trial (an allocator draws its trials at all times and emits only
	// while MeanBytes > 0); 0 after a mean <= 0 was set.
	TrialMeanBytes int64
}

// Enabled reports whether sampling is on.
func (s *State) Enabled() bool { return s.MeanBytes > 0 }

var (
	mu         sync.Mutex // serialises changes; readers use current
	configured = int64(DefaultMeanBytes)
	listening  bool
	current    atomic.Pointer[State]

	// epoch counts the changes of the configured mean; lastEpoch holds,
	// for each positive mean configured so far, the last epoch in which
	// it was in force (at most maxMeanHistory means; see MeansSince).
	epoch     uint64
	lastEpoch = map[int64]uint64{DefaultMeanBytes: 0}
	forgotten uint64 // the largest lastEpoch of a mean evicted from lastEpoch, plus 1
)

// maxMeanHistory bounds the number of distinct means [MeansSince] remembers.
const maxMeanHistory = 1024

func init() { current.Store(&State{TrialMeanBytes: configured}) }

// Current returns the sampling state in force. It is one atomic load.
func Current() *State { return current.Load() }

// publish installs a new State; mu must be held.
func publish() {
	mean := int64(0)
	if listening && configured > 0 {
		mean = configured
	}
	current.Store(&State{MeanBytes: mean, TrialMeanBytes: configured})
}

// SetListening records whether any consumer is registered.
func SetListening(on bool) {
	mu.Lock()
	defer mu.Unlock()
	listening = on
	publish()
}

// SetMean sets the configured mean (n <= 0 turns sampling off) and records
// it; it returns an error, and changes nothing, if n is above
// [MaxMeanBytes].
func SetMean(n int64) error {
	if n > MaxMeanBytes {
		return fmt.Errorf("hooks: mean %d bytes is above the maximum %d", n, int64(MaxMeanBytes))
	}
	if n < 0 {
		n = 0
	}
	mu.Lock()
	defer mu.Unlock()
	if n != configured {
		epoch++
		if n > 0 {
			if _, ok := lastEpoch[n]; !ok && len(lastEpoch) >= maxMeanHistory {
				evictOldestMean()
			}
		}
	}
	configured = n
	if n > 0 {
		lastEpoch[n] = epoch
	}
	publish()
	return nil
}

// Mean returns the configured mean, 0 if sampling was turned off.
func Mean() int64 {
	mu.Lock()
	defer mu.Unlock()
	return configured
}

// evictOldestMean forgets the mean last in force longest ago; mu is held.
func evictOldestMean() {
	var old int64
	oldE := ^uint64(0)
	for m, e := range lastEpoch {
		if m != configured && e < oldE {
			old, oldE = m, e
		}
	}
	delete(lastEpoch, old)
	forgotten = max(forgotten, oldE+1)
}

// Epoch returns the number of changes of the configured mean since the
// process started: pass it to [MeansSince] later to learn every mean in
// force from now on.
func Epoch() uint64 {
	mu.Lock()
	defer mu.Unlock()
	return epoch
}

// MeanInForce is one sampling mean configured at some point, and the last
// epoch (see [Epoch]) in which it was.
type MeanInForce struct {
	MeanBytes int64
	LastEpoch uint64
}

// MeansSince returns, in increasing order of mean, every positive mean that
// was configured at some point from epoch since (a value of [Epoch]) until
// now, and the current epoch. Allocators pick a change up at their next slow
// path, so these are the means their trial streams ran at during that time,
// except for a stream that had not yet picked up an older change (its events
// carry their mean all the same). complete is false if more than 1024
// distinct means were configured and some in force since then were
// forgotten.
func MeansSince(since uint64) (means []MeanInForce, now uint64, complete bool) {
	mu.Lock()
	defer mu.Unlock()
	for m, e := range lastEpoch {
		if e >= since {
			means = append(means, MeanInForce{MeanBytes: m, LastEpoch: e})
		}
	}
	slices.SortFunc(means, func(a, b MeanInForce) int { return cmp.Compare(a.MeanBytes, b.MeanBytes) })
	return means, epoch, since >= forgotten
}
