package ctxlabels

import (
	"context"
	"runtime/pprof"
	"testing"
)

func TestFromContext(t *testing.T) {
	cases := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"labels", pprof.WithLabels(context.Background(), pprof.Labels("route", "/x", "a", "1")), `{a="1", route="/x"}`},
		{"none", context.Background(), `{}`},
		{"nil", nil, `{}`},
	}
	for _, c := range cases {
		if got := FromContext(c.ctx).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
