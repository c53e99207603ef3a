module github.com/arenaprof/arenaprof/tools/heapcheck

go 1.26.0

require (
	github.com/arenaprof/arenaprof v0.0.0
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
)

require gonum.org/v1/gonum v0.17.0 // indirect

replace github.com/arenaprof/arenaprof => ../..
