module github.com/arenaprof/arenaprof/tools/heapbias

go 1.26.0

require github.com/arenaprof/arenaprof v0.0.0

require (
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	golang.org/x/sync v0.24.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/arenaprof/arenaprof => ../..
