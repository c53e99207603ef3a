// Package ctxlabels reads the pprof labels of a context (set with
// runtime/pprof.WithLabels or pprof.Do) as a [hooks.Labels] set: package
// arena's Pool labels its arenas with them.
package ctxlabels

import (
	"context"
	"runtime/pprof"

	"github.com/arenaprof/arenaprof/hooks"
)

// FromContext returns the pprof labels of ctx as a label set.
func FromContext(ctx context.Context) hooks.Labels {
	if ctx == nil {
		return hooks.Labels{}
	}
	var kv []string
	pprof.ForLabels(ctx, func(k, v string) bool {
		kv = append(kv, k, v)
		return true
	})
	return hooks.NewLabels(kv...)
}
