module github.com/arenaprof/arenaprof

go 1.26
