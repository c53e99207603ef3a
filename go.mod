module github.com/arenaprof/arenaprof

go 1.26.0

require (
	github.com/felixge/fgprof v0.9.5
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
	github.com/klauspost/compress v1.20.3
)

require (
	golang.org/x/term v0.48.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/dustin/go-humanize v1.1.0
	golang.org/x/sync v0.24.0
	golang.org/x/sys v0.50.0
)
