// Command checked shows the bug arenas invite and how checked mode catches
// it: a handler keeps a string from its request's arena in a cache, past
// Pool.Put, and a later request reads it.
//
//	go run ./examples/checked                      # bob's request shows bob's address as ada's
//	ARENAPROF_CHECKED=1 go run ./examples/checked  # stops at the stale read, naming the Put that released it
//
// Without checked mode the cached string silently shows whatever the next
// request wrote at the same address. With ARENAPROF_CHECKED=1 the first
// read through it stops the program with the runtime's fault report (its
// goroutine trace points at the stale read), followed by the stack of the
// Pool.Put that released the memory and of the Get that made the arena.
package main

import (
	"context"
	"fmt"

	"github.com/arenaprof/arenaprof/arena"
)

var (
	pool  arena.Pool
	cache = map[string]string{} // the bug: values from request arenas outlive their requests
)

// handle serves one request on an arena of the pool: it copies the user's
// e-mail address into the arena, wrongly caches it, and shows the first
// user's cached address.
func handle(user, email string) {
	a := pool.Get(context.Background())
	defer pool.Put(a) // the arena's memory is handed out again from here on
	e := arena.String(a, email)
	cache[user] = e // should be strings.Clone(e)
	fmt.Printf("%s's request: ada's address is %q\n", user, cache["ada"])
}

func main() {
	handle("ada", "ada@example.test")
	handle("bob", "bob@example.test") // reuses ada's arena, at the same addresses
}
