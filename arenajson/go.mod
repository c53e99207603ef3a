module github.com/arenaprof/arenaprof/arenajson

go 1.26.0

replace github.com/arenaprof/arenaprof => ../

require (
	github.com/arenaprof/arenaprof v0.0.0-00010101000000-000000000000
	github.com/go-json-experiment/json v1.27.2
	github.com/klauspost/compress v1.20.3
)
