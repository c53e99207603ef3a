package main

import (
	"net/url"
	"strings"

	"github.com/arenaprof/arenaprof/internal/pprofmt"
	"github.com/arenaprof/arenaprof/internal/pprofread"
	"github.com/arenaprof/arenaprof/report"
)

// loadedInput is a loaded profile and the inputs it was read from.
type loadedInput struct {
	srcs []string
	ap   *arenaProfile
}

// learnGoVersion returns v, the -go-version given, or when it is "" the
// release serviceGoVersion learns for the first of the loaded profiles
// that is a Go heap profile naming no release, read from one URL, and
// whose service can tell.
func learnGoVersion(v string, lim report.ParseOptions, loaded ...loadedInput) string {
	for _, l := range loaded {
		if v != "" {
			break
		}
		if len(l.srcs) == 1 && l.ap.facts.Kind == pprofmt.KindGoHeap && len(l.ap.facts.GoVersions) == 0 {
			v = serviceGoVersion(l.srcs[0], lim)
		}
	}
	return v
}

// serviceGoVersion learns the Go release of the service that served src,
// a net/http/pprof heap or allocs profile, whose profiles name none: a
// service running arenaprof serves /debug/arenaprof/memory beside
// /debug/pprof (on the same mux, under the same prefix), and that
// profile names the service's Go release in its comments. It returns ""
// when src is no such URL or the service cannot say (no arenaprof, an
// error, a profile naming no release); the caller then assumes the rule
// of the current releases, as for any profile that names none.
func serviceGoVersion(src string, lim report.ParseOptions) string {
	if !isProfileURL(src) {
		return ""
	}
	u, err := url.Parse(src)
	if err != nil {
		return ""
	}
	prefix, ok := strings.CutSuffix(u.Path, "/debug/pprof/heap")
	if !ok {
		if prefix, ok = strings.CutSuffix(u.Path, "/debug/pprof/allocs"); !ok {
			return ""
		}
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = prefix+"/debug/arenaprof/memory", "", "", ""
	s, err := fetchProfile(u.String())
	if err != nil {
		return ""
	}
	defer s.close()
	p, _, err := pprofread.Read(s.r, pprofread.Options(withDefaults(lim)))
	if err != nil {
		return ""
	}
	if vs := pprofmt.GoVersionsOf(p); len(vs) == 1 {
		return vs[0]
	}
	return ""
}
