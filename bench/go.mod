module github.com/arenaprof/arenaprof/bench

go 1.26.0

require github.com/arenaprof/arenaprof v0.0.0

require github.com/ortuman/nuke v1.3.0

replace github.com/arenaprof/arenaprof => ../
