// Package browsertest checks arenaprof's HTML pages (arenaprof html, the
// live page /debug/arenaprof/ui) in a real Chromium, driven headless
// through the DevTools protocol by github.com/chromedp/chromedp. It is a
// module of its own so that users of arenaprof never pull chromedp.
//
// The tests need Debian's chromium package (apt-get install -y chromium)
// or $ARENAPROF_CHROMIUM; without it they skip, and .ci/run fails on a
// skip. ARENAPROF_SCREENSHOTS=DIR writes the screenshots of the seven
// views (top, flame graph, live arenas, two live-arenas profiles, diff,
// a resident-memory profile's class tree, and README.md's front-page picture: top's table and flame graph in one)
// there (.ci/run does not; docs/ holds those of the last update, and
// TestFrontPicture checks that README.md shows docs/html-front.png).
//
//	cd tools/browsertest && go test -v .
//	ARENAPROF_SCREENSHOTS=../../docs go test -run TestPages .
//	go test -run '^$' -bench BigPage -benchtime 5x .
package browsertest
