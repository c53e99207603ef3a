package profiler

import "github.com/arenaprof/arenaprof/hooks"

// DefaultMeanBytes is the default mean distance between sampled bytes.
const DefaultMeanBytes = hooks.DefaultMeanBytes

// MaxMeanBytes is the largest mean accepted anywhere in arenaprof (2^40).
const MaxMeanBytes = hooks.MaxMeanBytes
