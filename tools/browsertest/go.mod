module github.com/arenaprof/arenaprof/tools/browsertest

go 1.26.0

require (
	github.com/arenaprof/arenaprof v0.0.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/google/pprof v0.0.0-20260906184651-6331bc6350fe
)

require (
	github.com/felixge/fgprof v0.9.5 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	golang.org/x/sync v0.24.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

replace github.com/arenaprof/arenaprof => ../..
