module github.com/arenaprof/arenaprof

go 1.26

require (
	github.com/felixge/fgprof v0.9.5
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
)

require gonum.org/v1/gonum v0.17.0
